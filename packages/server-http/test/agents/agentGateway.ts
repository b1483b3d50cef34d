/**
 * The gateway as docs/coding-agents.md configures it for a coding-agent
 * CLI: one provider of the family under test in front of a scripted
 * upstream, the CLI's own model names routed to the provider's model by
 * aliases, one client key. Shared by the Codex test and the agent matrix.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConfig } from '../../src/gateway/config/load.js';
import { Gateway } from '../../src/gateway/gateway.js';
import type { Family } from './scriptedUpstream.js';

/** The gateway's client key the CLIs present. */
export const GATEWAY_KEY = 'sk-agent-test';

/** Per family: the provider kind, the upstream's path prefix, and the model name the upstream knows. */
export const UPSTREAM_OF: Record<Family, { kind: string; prefix: string; model: string }> = {
  'openai-chat': { kind: 'openai-compatible', prefix: 'v1', model: 'local-coder' },
  'openai-responses': { kind: 'openai-responses', prefix: 'v1', model: 'gpt-5.1-codex' },
  anthropic: { kind: 'anthropic', prefix: 'v1', model: 'claude-sonnet-4-5' },
  gemini: { kind: 'gemini', prefix: 'v1beta', model: 'gemini-3-flash-preview' },
};

export interface AgentGateway {
  gateway: Gateway;
  /** Websocket sessions opened, and `response.create` messages received on them. */
  ws: { opened: number; creates: number };
  /** Each request the gateway answered (model name and HTTP status), token counts included. */
  served: { model: string; httpStatus: number }[];
}

/**
 * Starts the gateway with `clientModels` aliased to the family's upstream model (a client
 * model that is already the upstream's name routes by `models`). `scratch` holds its auth-dir.
 */
export async function startAgentGateway(
  family: Family,
  upstreamUrl: string,
  clientModels: string[],
  scratch: string,
): Promise<AgentGateway> {
  const upstream = UPSTREAM_OF[family];
  const aliases = clientModels.filter((m) => m !== upstream.model).map((m) => `"${m}": ${upstream.model}`);
  const yaml = `
port: 0
auth-dir: ${await mkdtemp(join(scratch, 'auths-'))}
api-keys: [${GATEWAY_KEY}]
metrics: { enabled: false }
server: { operations: { cache: { enabled: false } } }
providers:
  upstream:
    kind: ${upstream.kind}
    base_url: ${upstreamUrl}/${upstream.prefix}
    models: [${upstream.model}]
    aliases: { ${aliases.join(', ')} }
    health_check: { enabled: false }
`;
  const gateway = await Gateway.start({ config: parseConfig(yaml), logDestination: { write() {} } });
  if (family !== 'openai-chat')
    await gateway.credentials.manager.add({ id: 'k', provider: 'upstream', type: 'api_key', token: 'upstream-key' });
  const ws = { opened: 0, creates: 0 };
  gateway.websocket.events.on('websocket:open', () => ws.opened++);
  gateway.websocket.events.on('websocket:message', (m) => {
    if (m.direction === 'in' && m.type === 'response.create') ws.creates++;
  });
  const served: AgentGateway['served'] = [];
  gateway.relay.events.on('request:end', (e) => served.push({ model: e.model, httpStatus: e.httpStatus }));
  return { gateway, ws, served };
}
