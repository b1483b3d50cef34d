/**
 * @module keysCommand
 * `switchyard keys create|list|revoke`: client keys for operators without a
 * browser, through the management API of a running gateway
 * (`/v0/management/client-keys`). The management key comes from an
 * environment variable or a file, never from argv, which any user on the
 * host can read in `ps`.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { ClientKeyView } from './clientKeyRecord.js';

/** What the command reads of the API's answers (and of its error body). */
interface Answer {
  key: ClientKeyView;
  keys: ClientKeyView[];
  secret: string;
  id: string;
  name: string;
  error?: { code?: string; message?: string; details?: { field?: string } };
}

/** Where the command writes, and where it reads the management key from. */
export interface KeysIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** The HTTP client (tests may pass their own); default the global fetch. */
  fetch?: typeof fetch;
}

/** A mistake in how the command was called (exit code 2). */
export class KeysUsageError extends Error {
  override name = 'KeysUsageError';
}

export const KEYS_USAGE = `switchyard keys: client keys of a running gateway

Usage:
  switchyard keys create --name NAME [--tenant T] [--model M]... [--rpm N] [--tpm N]
                         [--budget LIMIT:UNIT:PERIOD] [--expires ISO-8601] [common]
  switchyard keys list [--tenant T] [--revoked | --live] [common]
  switchyard keys revoke ID [common]

  create prints the new key's secret (sk-sy-…) once; the gateway keeps only
  its hash. --model takes names and globs (* and ?), repeated; without it
  the key may use every model. --rpm and --tpm are requests and tokens per
  minute. --budget is e.g. 100000:tokens:daily, 25:cost:monthly (in the
  currency of providers.<p>.cost_per_1k_tokens) or 500:requests:daily;
  periods reset at 00:00 UTC (monthly: on the 1st).

Common options:
  --url URL              the gateway (default $SWITCHYARD_URL, else http://127.0.0.1:8317)
  --key-env NAME         read the management key from environment variable NAME
                         (default SWITCHYARD_MANAGEMENT_KEY)
  --key-file PATH        read the management key from a file instead
  --json                 print the API's JSON answer

Exit codes: 0 ok, 1 the gateway refused or could not be reached, 2 usage error.
`;

const OPTIONS = {
  url: { type: 'string' },
  'key-env': { type: 'string' },
  'key-file': { type: 'string' },
  json: { type: 'boolean' },
  name: { type: 'string' },
  tenant: { type: 'string' },
  model: { type: 'string', multiple: true },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  budget: { type: 'string' },
  expires: { type: 'string' },
  revoked: { type: 'boolean' },
  live: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Runs `switchyard keys …`; resolves with the exit code. */
export async function keysCommand(args: readonly string[], io: KeysIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  const [sub, ...rest] = positionals;
  if (values.help || sub === undefined) {
    io.stdout(KEYS_USAGE);
    return sub === undefined && !values.help ? 2 : 0;
  }
  if (!['create', 'list', 'revoke'].includes(sub)) throw new KeysUsageError(`unknown keys command ${JSON.stringify(sub)}`);
  if (sub === 'revoke' ? rest.length !== 1 : rest.length > 0) {
    throw new KeysUsageError(sub === 'revoke' ? 'keys revoke takes one key id (ck_…)' : `unexpected argument ${JSON.stringify(rest[0])}`);
  }
  const base = (values.url ?? io.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8317').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(base)) throw new KeysUsageError(`--url must be an http(s) URL, got ${JSON.stringify(base)}`);
  const managementKey = await readManagementKey(values, io.env);
  const call = async (method: string, path: string, body?: unknown) => {
    const doFetch = io.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(`${base}/v0/management/client-keys${path}`, {
        method,
        headers: { authorization: `Bearer ${managementKey}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new GatewayCallError(`cannot reach the gateway at ${base}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    const text = await response.text();
    let parsed: Answer;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new GatewayCallError(`${base} answered ${response.status} with something other than JSON: is it a Switchyard gateway?`);
    }
    if (!response.ok) throw new GatewayCallError(refusal(response.status, parsed));
    return parsed;
  };
  try {
    if (sub === 'create') {
      const answer = await call('POST', '', createBody(values));
      if (values.json) io.stdout(`${JSON.stringify(answer, null, 2)}\n`);
      else {
        io.stdout(`created ${answer.key.id} (${answer.key.name}, tenant ${answer.key.tenant})\n`);
        io.stdout(`secret: ${answer.secret}\n`);
        io.stderr('the secret is shown this once: store it now; the gateway keeps only its hash\n');
      }
      return 0;
    }
    if (sub === 'list') {
      const query = new URLSearchParams();
      if (values.tenant) query.set('tenant', values.tenant);
      if (values.revoked && values.live) throw new KeysUsageError('--revoked and --live exclude each other');
      if (values.revoked || values.live) query.set('revoked', values.revoked ? 'true' : 'false');
      const answer = await call('GET', query.size > 0 ? `?${query}` : '');
      io.stdout(values.json ? `${JSON.stringify(answer, null, 2)}\n` : table(answer.keys));
      return 0;
    }
    const answer = await call('POST', `/${encodeURIComponent(rest[0]!)}/revoke`);
    io.stdout(values.json ? `${JSON.stringify(answer, null, 2)}\n` : `revoked ${answer.id} (${answer.name})\n`);
    return 0;
  } catch (error) {
    if (error instanceof GatewayCallError) {
      io.stderr(`switchyard keys: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

class GatewayCallError extends Error {}

async function readManagementKey(values: Values, env: NodeJS.ProcessEnv): Promise<string> {
  if (values['key-env'] && values['key-file']) throw new KeysUsageError('give --key-env or --key-file, not both');
  if (values['key-file']) {
    try {
      return (await readFile(values['key-file'], 'utf8')).trim();
    } catch (error) {
      throw new KeysUsageError(`cannot read the management key from ${values['key-file']}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }
  const name = values['key-env'] ?? 'SWITCHYARD_MANAGEMENT_KEY';
  const key = env[name]?.trim();
  if (!key) throw new KeysUsageError(`no management key: set ${name} to remote-management.secret-key (or use --key-file)`);
  return key;
}

function whole(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) throw new KeysUsageError(`${flag} takes a whole number above 0, got ${JSON.stringify(value)}`);
  return Number(value);
}

function createBody(values: Values): Record<string, unknown> {
  if (!values.name) throw new KeysUsageError('keys create needs --name');
  const body: Record<string, unknown> = { name: values.name };
  if (values.tenant) body.tenant = values.tenant;
  if (values.model) body.models = values.model;
  const rpm = whole('--rpm', values.rpm);
  const tpm = whole('--tpm', values.tpm);
  if (rpm !== undefined) body.requests_per_minute = rpm;
  if (tpm !== undefined) body.tokens_per_minute = tpm;
  if (values.budget) {
    const match = /^([0-9]+(?:\.[0-9]+)?):(tokens|requests|cost):(daily|monthly)$/.exec(values.budget);
    if (!match) throw new KeysUsageError(`--budget is LIMIT:UNIT:PERIOD (e.g. 100000:tokens:daily), got ${JSON.stringify(values.budget)}`);
    body.budget = { limit: Number(match[1]), unit: match[2], period: match[3] };
  }
  if (values.expires) {
    if (Number.isNaN(Date.parse(values.expires)))
      throw new KeysUsageError(`--expires takes an ISO 8601 time, got ${JSON.stringify(values.expires)}`);
    body.expires_at = new Date(values.expires).toISOString();
  }
  return body;
}

function refusal(status: number, body: Answer): string {
  const error = body.error ?? {};
  if (status === 401) return 'the gateway refused the management key (401): check remote-management.secret-key';
  if (status === 404 && error.code === 'not_found' && !String(error.message ?? '').includes('client key')) {
    return 'the gateway has no client-keys API here (404): is remote-management.secret-key set?';
  }
  const field = error.details?.field ? ` (${error.details.field})` : '';
  return `${status} ${error.code ?? 'error'}${field}: ${error.message ?? 'no message'}`;
}

function table(keys: ClientKeyView[]): string {
  if (keys.length === 0) return 'no client keys\n';
  const rows = keys.map((key) => [
    key.id,
    key.name,
    key.tenant,
    key.revoked ? 'revoked' : key.expires_at && Date.parse(key.expires_at) <= Date.now() ? 'expired' : 'live',
    key.models ? key.models.join(',') : '*',
    [key.requests_per_minute ? `${key.requests_per_minute} rpm` : '', key.tokens_per_minute ? `${key.tokens_per_minute} tpm` : '']
      .filter(Boolean)
      .join(' ') || '-',
    key.budget ? `${key.budget_use?.used ?? 0}/${key.budget.limit} ${key.budget.unit} ${key.budget.period}` : '-',
    key.last_used_at ?? '-',
  ]);
  const header = ['ID', 'NAME', 'TENANT', 'STATE', 'MODELS', 'RATES', 'BUDGET', 'LAST USED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  return `${[header, ...rows]
    .map((r) =>
      r
        .map((cell, i) => String(cell).padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
