import { startAgentSessionServer } from '@switchyard/agent-session';

// Any interactive terminal program works; `port: 0` picks a free port (3284 by default).
const server = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, stableWindowMs: 500 });
const api = async <T>(path: string, body?: unknown): Promise<T> => {
  const init = body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {};
  return (await fetch(`${server.url}${path}`, init)).json() as Promise<T>;
};
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
