/**
 * A local fake of the REST tracker: OAuth 2.0 client credentials at
 * `/oauth/token`, issues at `/issues`, on 127.0.0.1 and port 0.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeIssue {
  id: string;
  title: string;
  description: string;
  state: string;
  url: string;
}

export async function startFakeTracker(): Promise<{ url: string; issues: Map<string, FakeIssue>; close(): Promise<void> }> {
  const issues = new Map<string, FakeIssue>();
  let next = 1;
  const read = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return text;
  };
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const body = await read(req);
    if (req.url === '/oauth/token') {
      if (req.headers.authorization !== `Basic ${Buffer.from('yard:tracker-secret').toString('base64')}`)
        return send(401, { error: 'invalid_client' });
      return send(200, { access_token: 'token-1', expires_in: 3600, token_type: 'Bearer' });
    }
    if (req.headers.authorization !== 'Bearer token-1') return send(401, { error: 'unauthorized' });
    const match = /^\/issues(?:\/([^/]+))?$/.exec(req.url ?? '');
    if (!match) return send(404, { error: 'not found' });
    if (req.method === 'POST' && !match[1]) {
      const id = String(next++);
      const issue = { ...JSON.parse(body), id, url: `http://tracker.invalid/issues/${id}` } as FakeIssue;
      issues.set(id, issue);
      return send(201, issue);
    }
    const issue = issues.get(match[1] ?? '');
    if (!issue) return send(404, { error: 'no such issue' });
    if (req.method === 'PATCH') Object.assign(issue, JSON.parse(body));
    return send(200, issue);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    issues,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
