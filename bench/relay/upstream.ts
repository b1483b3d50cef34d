/**
 * Benchmark upstream: the cheapest OpenAI-compatible server that still
 * reads the request and answers in the documented shapes, so what is
 * measured is the proxies in front of it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1767225600,
    model: 'bench-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.' },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
  }),
);
const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1767225600, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const events = [
  chunk({ role: 'assistant', content: '' }, null),
  ...['The quick ', 'brown fox ', 'jumps over ', 'the lazy dog.'].map((c) => chunk({ content: c }, null)),
  chunk({}, 'stop'),
];
const usageEvent = `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1767225600, model: 'bench-model', choices: [], usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 } })}\n\n`;

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // The first event goes out at once (for time to first byte), the rest right after.
      res.write(events[0]);
      setImmediate(() => {
        for (const event of events.slice(1)) res.write(event);
        if (body.includes('"include_usage":true')) res.write(usageEvent);
        res.end('data: [DONE]\n\n');
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.length });
    res.end(completion);
  });
});
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => console.log(`READY ${(server.address() as AddressInfo).port}`));
