/**
 * One error answer for bad input on every control plane (issue 22; docs/ARCHITECTURE.md, "One HTTP
 * kit"): the gateway's management API, the agent session API and the workflow API get the same bad
 * input and must answer with the same status, the same code and a body of the same shape,
 * `{error: {code, message, details: {field, issues: [{field, message}]}}}` naming the failing field.
 * Before the HTTP kit the three answered 422 `validation_failed` or 400 `bad_request`, always 422,
 * and 422 `invalid_argument`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AgentSessionServer, startAgentSessionServer } from '@switchyard/agent-session';
import { MemoryWorkflowStore, Workflow } from '@switchyard/workflow';
import { createWorkflowApi } from '@switchyard/workflow-http';
import { startTestGateway } from '../packages/server-http/test/startTestGateway.js';

const KEY = 'control-plane-errors-key';

/** Sends a request to one control plane. */
type Send = (method: string, path: string, body?: string) => Promise<Response>;

const jsonRequest = (method: string, body?: string): RequestInit => ({
  method,
  headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
  ...(body === undefined ? {} : { body }),
});

interface Plane {
  send: Send;
  /** A route whose JSON body has a required string field, and that field's name. */
  stringField: { path: string; field: string; valid: Record<string, unknown> };
  /** A route with a query parameter that must be a whole number, where the plane has one. */
  numericQuery?: { path: string; parameter: string };
}

const planes: Record<string, Plane> = {};
let agent: AgentSessionServer | undefined;
after(() => agent?.close());

before(async () => {
  const { url } = await startTestGateway(
    (dir) => `port: 0\nauth-dir: ${dir}/auths\nremote-management: { secret-key: ${KEY} }\nproviders: { a: { kind: mock, models: [m] } }\n`,
  );
  planes.gateway = {
    send: (method, path, body) => fetch(`${url}${path}`, jsonRequest(method, body)),
    stringField: { path: '/v0/management/client-keys', field: 'name', valid: {} },
    numericQuery: { path: '/v0/management/logs', parameter: 'lines' },
  };

  const session = await startAgentSessionServer({ command: 'cat', port: 0 });
  agent = session;
  planes['agent session'] = {
    send: (method, path, body) => fetch(`${session.url}${path}`, jsonRequest(method, body)),
    stringField: { path: '/message', field: 'content', valid: { type: 'user' } },
  };

  const workflowApi = createWorkflowApi({ workflow: new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop' }), apiKeys: [KEY] });
  planes.workflow = {
    send: async (method, path, body) => workflowApi.request(path, jsonRequest(method, body)),
    stringField: { path: '/features', field: 'title', valid: { slug: '001-login', actor: 'alice' } },
    numericQuery: { path: '/features/001-login/audit', parameter: 'limit' },
  };
});

/** The body's structure with every leaf replaced by its type: what "the same shape" compares. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, shapeOf(inner)]),
    );
  return typeof value;
}

const ONE_ISSUE_SHAPE = {
  error: { code: 'string', details: { field: 'string', issues: [{ field: 'string', message: 'string' }] }, message: 'string' },
};

interface ErrorAnswer {
  status: number;
  body: { error: { code: string; message: string; details: { field: string; issues: { field: string; message: string }[] } } };
}

async function answer(response: Promise<Response>): Promise<ErrorAnswer> {
  const settled = await response;
  return { status: settled.status, body: (await settled.json()) as ErrorAnswer['body'] };
}

describe('the same bad input gets the same answer from every control plane', () => {
  test('a required string field given a number: 422 validation_failed naming the field', async () => {
    for (const [name, plane] of Object.entries(planes)) {
      const { path, field, valid } = plane.stringField;
      const { status, body } = await answer(plane.send('POST', path, JSON.stringify({ ...valid, [field]: 42 })));
      assert.equal(status, 422, name);
      assert.equal(body.error.code, 'validation_failed', name);
      assert.deepEqual(shapeOf(body), ONE_ISSUE_SHAPE, name);
      assert.deepEqual([body.error.details.field, body.error.details.issues[0]!.field], [field, field], name);
      assert.match(body.error.message, new RegExp(`^${field}: `), name);
    }
  });

  test('a body that is not JSON: 400 bad_request, in the same envelope on every plane', async () => {
    const shapes = new Set<string>();
    for (const [name, plane] of Object.entries(planes)) {
      const { status, body } = await answer(plane.send('POST', plane.stringField.path, '{"oops":'));
      assert.equal(status, 400, name);
      assert.equal(body.error.code, 'bad_request', name);
      assert.equal(typeof body.error.message, 'string', name);
      shapes.add(JSON.stringify(shapeOf(body)));
    }
    assert.equal(shapes.size, 1, `the planes answer in different shapes: ${[...shapes].join(' | ')}`);
  });

  test('a query parameter that is not a number: 400 bad_request naming the parameter (the planes that take one)', async () => {
    const withQuery = Object.entries(planes).filter(([, plane]) => plane.numericQuery);
    assert.ok(withQuery.length >= 2, 'at least two planes to compare');
    for (const [name, plane] of withQuery) {
      const { path, parameter } = plane.numericQuery!;
      const { status, body } = await answer(plane.send('GET', `${path}?${parameter}=many`));
      assert.equal(status, 400, name);
      assert.equal(body.error.code, 'bad_request', name);
      assert.deepEqual(shapeOf(body), ONE_ISSUE_SHAPE, name);
      assert.equal(body.error.details.field, parameter, name);
    }
  });
});
