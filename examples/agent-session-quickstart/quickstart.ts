import { startAgentSessionServer } from '@switchyard/server-http';

// Any interactive terminal program works; `port: 0` picks a free port (3284 by default).
const server = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, stableWindowMs: 500 });
const api = (path: string, body?: unknown) =>
  fetch(
    `${server.url}${path}`,
    body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {},
  ).then((r) => r.json());
const idle = async () => {
  while ((await api<{ status: string }>('/status')).status !== 'stable') await new Promise((resolve) => setTimeout(resolve, 100));
};

await idle();
await api('/message', { content: 'print(6 * 7)', type: 'user' });
await idle();
const { messages } = await api<{ messages: { role: string; content: string }[] }>('/messages');
for (const message of messages) console.log(`${message.role}: ${message.content}`);
console.log(`chat with it at ${server.url}/chat`);
await server.close();
