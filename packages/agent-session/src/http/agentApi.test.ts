// The HTTP API in front of a real python3 -i: answers, bad input, access rules, uploads, docs.
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { dirname } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertMethodNotAllowed, sendExpectingContinue } from '@switchyard/test-support';
import { Client } from 'undici';
import { type AgentSessionServer, startAgentSessionServer } from '../agentSessionServer.js';

let server: AgentSessionServer;
before(async () => {
  server = await startAgentSessionServer({
    command: 'python3',
    args: ['-i', '-q'],
    port: 0,
    stableWindowMs: 300,
    uploadLimitBytes: 64 * 1024,
  });
});
after(() => server.close());

const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers, body });

async function untilStable(timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = (await (await fetch(`${server.url}/status`)).json()) as { status: string };
    if (status.status === 'stable') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the agent never became stable');
}

async function untilAgentSays(content: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { messages } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string; content: string }[] };
    if (messages.at(-1)?.role === 'agent' && messages.at(-1)?.content === content) return untilStable();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the agent never said ${content}`);
}

/** A request with a Host header of our choosing (fetch does not allow setting it). */
function withHost(host: string, path = '/status'): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string; fields: string[] }> {
  const body = (await response.json()) as {
    error: { code: string; message: string; details?: { field: string; issues: { field: string }[] } };
  };
  return {
    status: response.status,
    code: body.error.code,
    message: body.error.message,
    fields: (body.error.details?.issues ?? []).map((d) => d.field),
  };
}

describe('the conversation over HTTP', () => {
  test('status, a message and its reply, 409 while running, raw input unrecorded, the screen', async () => {
    await untilStable();
    assert.deepEqual(await (await fetch(`${server.url}/status`)).json(), { status: 'stable', agent_type: 'generic', transport: 'pty' });
    const sent = await post('/message', JSON.stringify({ content: 'print(6 * 7)', type: 'user' }));
    assert.deepEqual([sent.status, await sent.json()], [200, { ok: true }]);
    const busy = await errorOf(await post('/message', JSON.stringify({ content: 'print(1)' })));
    assert.equal(busy.status, 409);
    assert.equal(busy.code, 'conflict');
    assert.match(busy.message, /running; wait until its status is stable/);
    await untilAgentSays('42');
    const { messages } = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string; content: string }[] };
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'print(6 * 7)'],
        ['agent', '42'],
      ],
    );
    const raw = await post('/message', JSON.stringify({ content: 'print(99 + 1)\r', type: 'raw' }));
    assert.equal(raw.status, 200);
    const deadline = Date.now() + 20_000;
    let lines: string[] = [];
    while (Date.now() < deadline && !lines.includes('100')) {
      lines = ((await (await fetch(`${server.url}/screen`)).json()) as { lines: string[] }).lines.map((l) => l.trim());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(lines.includes('100'), 'raw keys reached the interpreter');
    await untilStable();
    const after = (await (await fetch(`${server.url}/messages`)).json()) as { messages: { role: string }[] };
    assert.equal(after.messages.filter((m) => m.role === 'user').length, 1, 'raw input is not a message');
  });
});

describe('bad input gets a clear 4xx in the control-plane error shape', () => {
  const cases: [string, () => Promise<Response>, number, string, string[]][] = [
    ['empty content', () => post('/message', JSON.stringify({ content: '', type: 'user' })), 422, 'validation_failed', ['content']],
    ['blank content', () => post('/message', JSON.stringify({ content: ' \n\t' })), 422, 'validation_failed', ['content']],
    [
      'oversized content',
      () => post('/message', JSON.stringify({ content: 'x'.repeat(300 * 1024) })),
      413,
      'payload_too_large',
      ['content'],
    ],
    ['an oversized body', () => post('/message', JSON.stringify({ content: 'x'.repeat(2 * 1024 * 1024) })), 413, 'payload_too_large', []],
    [
      'a wrong content type',
      () => post('/message', '{"content":"hi"}', { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
      ['content-type'],
    ],
    ['no content type', () => post('/message', '{"content":"hi"}', {}), 415, 'unsupported_media_type', ['content-type']],
    ['malformed JSON', () => post('/message', '{"content":'), 400, 'bad_request', []],
    ['a misspelt key', () => post('/message', JSON.stringify({ content: 'hi', tpye: 'raw' })), 422, 'validation_failed', ['tpye']],
    ['an unknown type', () => post('/message', JSON.stringify({ content: 'hi', type: 'shout' })), 422, 'validation_failed', ['type']],
    ['content that is not a string', () => post('/message', JSON.stringify({ content: 42 })), 422, 'validation_failed', ['content']],
    [
      'control characters in a user message',
      () => post('/message', JSON.stringify({ content: 'a\u0007b' })),
      422,
      'validation_failed',
      ['content'],
    ],
    ['empty raw input', () => post('/message', JSON.stringify({ content: '', type: 'raw' })), 422, 'validation_failed', ['content']],
    ['an unknown route', () => fetch(`${server.url}/nope`), 404, 'not_found', []],
  ];
  for (const [name, send, status, code, fields] of cases) {
    test(name, async () => {
      const error = await errorOf(await send());
      assert.equal(error.status, status);
      assert.equal(error.code, code);
      assert.ok(error.message.length > 0);
      for (const field of fields) assert.ok(error.fields.includes(field), `details name ${field}: ${JSON.stringify(error)}`);
    });
  }
});

describe('access', () => {
  test('an unknown Host header is refused (DNS rebinding); localhost names are served', async () => {
    const port = new URL(server.url).port;
    const evil = await withHost(`attacker.example:${port}`);
    assert.equal(evil.status, 403);
    assert.match(JSON.parse(evil.body).error.message, /host "attacker\.example:\d+" is not allowed/);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST'])
      assert.equal((await withHost(host)).status, 200, host);
  });

  test('a cross-origin POST is refused unless CORS allows the origin; same-origin is fine', async () => {
    const foreign = await post('/message', JSON.stringify({ content: 'print(1)' }), {
      'content-type': 'application/json',
      origin: 'https://evil.example',
    });
    assert.equal((await errorOf(foreign)).status, 403);
    const sameOrigin = await post('/message', JSON.stringify({ content: '' }), { 'content-type': 'application/json', origin: server.url });
    assert.equal(sameOrigin.status, 422, 'got past the origin check to validation');
  });

  test('CORS and an API key on a second server', async () => {
    const guarded = await startAgentSessionServer({
      command: 'python3',
      args: ['-i', '-q'],
      port: 0,
      apiKey: 'sk-test-key',
      cors: { origins: ['https://app.example'] },
    });
    try {
      const preflight = await fetch(`${guarded.url}/message`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example');
      const other = await fetch(`${guarded.url}/status`, { headers: { origin: 'https://other.example' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      const anonymous = await errorOf(await fetch(`${guarded.url}/status`));
      assert.deepEqual([anonymous.status, anonymous.code], [401, 'unauthorized']);
      const wrong = await fetch(`${guarded.url}/status`, { headers: { authorization: 'Bearer sk-test-kez' } });
      assert.equal(wrong.status, 401);
      assert.doesNotMatch(await wrong.text(), /sk-test/, 'the key never appears in an answer');
      const wrongMethod = await fetch(`${guarded.url}/status`, { method: 'DELETE' });
      assert.deepEqual(
        [wrongMethod.status, wrongMethod.headers.get('allow')],
        [401, null],
        'which routes exist is not told without the key',
      );
      const unkeyedUpload = await sendExpectingContinue(`${guarded.url}/upload`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=b' },
        contentLength: 1024,
      });
      assert.deepEqual([unkeyedUpload.status, unkeyedUpload.continued], [401, false], 'refused before the client uploads');
      const right = await fetch(`${guarded.url}/status`, { headers: { authorization: 'Bearer sk-test-key' } });
      assert.equal(right.status, 200);
      assert.equal((await fetch(`${guarded.url}/chat`)).status, 200, 'pages stay public');
      assert.match(await (await fetch(`${guarded.url}/chat`)).text(), /data-api-key="required"/);
    } finally {
      await guarded.close();
    }
  });
});

describe('uploads', () => {
  const upload = (name: string, bytes: Uint8Array, field = 'file') => {
    const form = new FormData();
    form.append(field, new Blob([bytes]), name);
    return fetch(`${server.url}/upload`, { method: 'POST', body: form });
  };

  test('stores the file privately inside the upload directory under a safe name', async () => {
    const first = (await (await upload('../../../etc/evil name.txt', new TextEncoder().encode('hello'))).json()) as {
      path: string;
      size: number;
    };
    const second = (await (await upload('../../../etc/evil name.txt', new TextEncoder().encode('again'))).json()) as { path: string };
    assert.match(first.path, /switchyard-agent-uploads-[^/]+\/[0-9a-f]{8}-evil_name\.txt$/);
    assert.equal(dirname(first.path), dirname(second.path));
    assert.notEqual(first.path, second.path, 'no upload replaces another');
    assert.equal(first.size, 5);
    assert.equal(await readFile(first.path, 'utf8'), 'hello');
    assert.equal((await stat(first.path)).mode & 0o777, 0o600);
  });

  test('too large, not multipart, or without a file field: a clear 4xx', async () => {
    const big = await errorOf(await upload('big.bin', new Uint8Array(65 * 1024)));
    assert.deepEqual([big.status, big.code], [413, 'payload_too_large']);
    const json = await errorOf(await post('/upload', '{}'));
    assert.deepEqual([json.status, json.code], [415, 'unsupported_media_type']);
    const noFile = await errorOf(await upload('a.txt', new Uint8Array(1), 'other'));
    assert.deepEqual([noFile.status, noFile.fields], [422, ['file']]);
  });
});

describe('refused request bodies', () => {
  test('a body refused unread (wrong type, declared too large) is drained: the client gets the answer and keeps its connection', async () => {
    const client = new Client(server.url, { pipelining: 1 });
    let connections = 0;
    client.on('connect', () => connections++);
    const refusals: [path: string, contentType: string, body: string, status: number][] = [
      ['/message', 'text/plain', 'x'.repeat(64 * 1024), 415],
      ['/upload', 'application/json', `{"file":"${'x'.repeat(64 * 1024)}"}`, 415],
      ['/message', 'application/json', JSON.stringify({ content: 'x'.repeat(2 * 1024 * 1024) }), 413],
      ['/upload', 'multipart/form-data; boundary=b', `--b\r\n${'x'.repeat(256 * 1024)}`, 413],
    ];
    try {
      for (let round = 0; round < 5; round++) {
        for (const [path, contentType, body, status] of refusals) {
          const response = await client.request({ path, method: 'POST', headers: { 'content-type': contentType }, body });
          const answer = await response.body.text();
          assert.equal(response.statusCode, status, `${path} ${contentType}: ${answer}`);
        }
      }
      const status = await client.request({ path: '/status', method: 'GET' });
      assert.equal(status.statusCode, 200);
      await status.body.text();
      assert.equal(connections, 1, 'every request went over the first connection');
    } finally {
      await client.close();
    }
  });
});

describe('a wrong method is 405 with Allow', () => {
  test('API routes and pages name the methods they serve; CORS serves OPTIONS everywhere', async () => {
    const wrong: [method: string, path: string, allow: string][] = [
      ['DELETE', '/status', 'GET, HEAD, OPTIONS'],
      ['GET', '/message', 'OPTIONS, POST'],
      ['PUT', '/upload', 'OPTIONS, POST'],
      ['POST', '/chat', 'GET, HEAD, OPTIONS'],
      ['POST', '/openapi.json', 'GET, HEAD, OPTIONS'],
    ];
    for (const [method, path, allow] of wrong)
      await assertMethodNotAllowed(await fetch(`${server.url}${path}`, { method }), allow, `${method} ${path}`);
  });

  test('Allow agrees with /openapi.json for every documented path', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, operations] of Object.entries(doc.paths)) {
      const documented = new Set([...Object.keys(operations).map((method) => method.toUpperCase()), 'OPTIONS']);
      if (documented.has('GET')) documented.add('HEAD');
      // No route serves PATCH, so it probes every path.
      const response = await fetch(`${server.url}${path}`, { method: 'PATCH' });
      assert.equal(response.status, 405, `PATCH ${path}`);
      assert.equal(response.headers.get('allow'), [...documented].sort().join(', '), path);
    }
  });
});

describe('Expect: 100-continue', () => {
  const expectContinue = (path: string, contentType: string, contentLength: number, body?: string) =>
    sendExpectingContinue(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      contentLength,
      ...(body === undefined ? {} : { body }),
    });

  test('a body over its cap, or of the wrong type, is refused before the 100: the client never uploads it', async () => {
    const refusals: [path: string, contentType: string, contentLength: number, status: number][] = [
      ['/upload', 'multipart/form-data; boundary=b', 10 * 1024 * 1024, 413],
      ['/message', 'application/json', 2 * 1024 * 1024, 413],
      ['/message', 'text/plain', 16, 415],
    ];
    for (const [path, contentType, contentLength, status] of refusals) {
      const outcome = await expectContinue(path, contentType, contentLength);
      assert.deepEqual([outcome.status, outcome.continued], [status, false], `${path} ${contentType}: ${outcome.body}`);
      assert.equal(typeof JSON.parse(outcome.body).error.code, 'string', 'the control plane error shape');
      assert.equal(outcome.headers.connection, 'close', 'the body never came, so the connection ends');
    }
  });

  test('a body within the cap gets its 100 and is read', async () => {
    const body = JSON.stringify({ content: '' });
    const outcome = await expectContinue('/message', 'application/json', Buffer.byteLength(body), body);
    assert.equal(outcome.continued, true);
    assert.equal(outcome.status, 422, 'validated, so it was read');
  });
});

describe('documentation', () => {
  test('/openapi.json describes every route from the validating schemas; /docs renders it readably', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    assert.equal(document.openapi, '3.1.0');
    for (const path of ['/status', '/messages', '/message', '/dialog', '/events', '/upload', '/screen'])
      assert.ok(document.paths[path], path);
    for (const schema of ['PostMessageBody', 'PostDialogBody', 'Dialog', 'AgentMessage', 'StatusResponse', 'ErrorBody'])
      assert.ok(document.components.schemas[schema], schema);
    const docs = await fetch(`${server.url}/docs`);
    assert.match(docs.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    const html = await docs.text();
    for (const text of ['POST', '/message', 'Event stream frames', 'status_change', 'Last-Event-ID', 'PostMessageBody'])
      assert.ok(html.includes(text), text);
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.headers.get('location'), '/chat');
  });

  test('/openapi.json lists every error status the routes answer, and the upload field as required', async () => {
    type Operation = { responses: Record<string, unknown>; requestBody?: { content: Record<string, { schema: { required?: string[] } }> } };
    const operations = async (url: string) => {
      const document = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
      return (method: string, path: string) => document.paths[path]![method]!;
    };
    const open = await operations(server.url);
    // What the cases above (and the access tests) get back: malformed JSON or form data is 400, a foreign Host or Origin 403.
    const answered: [method: string, path: string, statuses: number[]][] = [
      ['post', '/message', [400, 403, 409, 413, 415, 422, 503]],
      ['post', '/upload', [400, 403, 413, 415, 422]],
      ['post', '/dialog', [400, 403, 409, 415, 422, 503]],
      ['get', '/status', [403]],
      ['get', '/messages', [403]],
      ['get', '/events', [403]],
      ['get', '/screen', [403, 404]],
    ];
    for (const [method, path, statuses] of answered) {
      const documented = Object.keys(open(method, path).responses);
      for (const status of statuses) assert.ok(documented.includes(String(status)), `${method.toUpperCase()} ${path} documents ${status}`);
      assert.ok(!documented.includes('401'), `${path}: no 401 without an API key`);
    }
    assert.deepEqual(open('post', '/upload').requestBody?.content['multipart/form-data']?.schema.required, ['file']);
    const resume = (open('get', '/events') as Operation & { parameters: { name: string; in: string }[] }).parameters;
    assert.deepEqual(
      resume.map((p) => `${p.in}:${p.name}`),
      ['query:last_event_id', 'header:last-event-id'],
    );

    const guarded = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, apiKey: 'sk-docs-key' });
    try {
      const withKey = await operations(guarded.url);
      for (const [method, path] of answered) assert.ok(withKey(method, path).responses['401'], `${path} documents 401 with an API key`);
    } finally {
      await guarded.close();
    }
  });
});

describe('dialogs', () => {
  test('POST /dialog: 409 while no dialog is shown, 422 for a bad body, 415 for one that is not JSON', async () => {
    await untilStable();
    const none = await errorOf(await post('/dialog', JSON.stringify({ option: 1 })));
    assert.deepEqual([none.status, none.code], [409, 'conflict']);
    assert.match(none.message, /no dialog/);
    for (const bad of [{ option: 0 }, { option: 1.5 }, { option: '1' }, {}, { option: 1, extra: true }]) {
      const error = await errorOf(await post('/dialog', JSON.stringify(bad)));
      assert.deepEqual([error.status, error.code], [422, 'validation_failed'], JSON.stringify(bad));
    }
    assert.equal((await post('/dialog', '{"option": 1}', { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await post('/dialog', '{"option":')).status, 400);
  });
});

describe('the screen as a stream', () => {
  test('GET /screen with Accept: text/event-stream sends the screen at once, then again when it changes', async () => {
    await untilStable();
    const response = await fetch(`${server.url}/screen`, { headers: { accept: 'text/event-stream' } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    const nextScreen = async (): Promise<{ lines: string[]; cols: number }> => {
      for (;;) {
        const frame = /event: screen\ndata: (.*)\n\n/.exec(buffer);
        if (frame) {
          buffer = buffer.slice(frame.index + frame[0].length);
          return JSON.parse(frame[1]!) as { lines: string[]; cols: number };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += value;
      }
    };
    try {
      const first = await nextScreen();
      assert.equal(first.cols, 120);
      assert.ok(!first.lines.some((line) => line.trim() === '127'));
      assert.equal((await post('/message', JSON.stringify({ content: 'print(123 + 4)\r', type: 'raw' }))).status, 200);
      let screen = await nextScreen();
      while (!screen.lines.some((line) => line.trim() === '127')) screen = await nextScreen();
      assert.ok(
        screen.lines.some((line) => line.includes('print(123 + 4)')),
        'the frame is the whole screen',
      );
    } finally {
      await reader.cancel();
    }
    await untilStable();
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: { '/screen': { get: { responses: { 200: { content: Record<string, unknown> } } } } };
    };
    assert.deepEqual(Object.keys(document.paths['/screen'].get.responses[200].content).sort(), ['application/json', 'text/event-stream']);
  });
});
