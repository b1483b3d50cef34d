import { MemoryWorkflowStore, Workflow } from '@switchyard/workflow';
import { startWorkflowHttpServer } from '@switchyard/workflow-http';

const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop' });
const server = await startWorkflowHttpServer({ workflow, apiKeys: ['s3cret'], port: 0 });
// biome-ignore lint/suspicious/noExplicitAny: a quick client; the shapes are in /openapi.json
const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: 'Bearer s3cret', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
};

await call('POST', '/features', { slug: '001-login', title: 'Log in with passkeys', actor: 'alice' });
const moved = await call('POST', '/features/001-login/transition', { to: 'SPECIFIED', actor: 'alice' });
console.log(moved.status, moved.json.entry.transition);
await call('POST', '/features/001-login/work-packages', { title: 'Login form', actor: 'alice' });
await call('POST', '/features/001-login/transition', { to: 'DOING', wp_sequence: 1, actor: 'bob' });
const refused = await call('POST', '/features/001-login/transition', { to: 'REVIEW', wp_sequence: 1, actor: 'bob' });
console.log(refused.status, refused.json.error.details.violations[0].rule_id);
const audit = await call('GET', '/features/001-login/audit?verify=true');
console.log(audit.json.verification.valid);
await server.close();
