/**
 * @module login
 * `switchyard login <flow>`: the device sign-in of the sign-in page, in a
 * terminal. It reads the config for its flows and `auth-dir`, prints the
 * code and the verification URL, shows progress while the flow polls, and
 * writes the credential into `auth-dir` (mode 0600) through the credentials
 * package's file store, where a running gateway picks it up. Ctrl-C
 * cancels. The refresh worker stays off here: refreshing is the gateway's
 * job, and a login must not spend other credentials' refresh tokens.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type AuthConfigInput, CredentialsError, MemorySignInDirectory, openCredentials } from '@switchyard/credentials';
import { loadConfigFile } from './config/load.js';
import { resolveAuthDir } from './credentials.js';
import { configuredFlows, flowKinds, signInRequest } from './flows.js';

/** Where the command writes, and the process signals it listens to (Ctrl-C). */
export interface LoginIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  signals: NodeJS.EventEmitter;
  knownKinds: readonly string[];
  /** How often progress is printed while waiting (default 5 s). */
  progressEveryMs?: number;
}

/** A mistake in how the command was called (exit code 2). */
export class LoginUsageError extends Error {
  override name = 'LoginUsageError';
}

/** Exit code of a sign-in the user cancelled (as a shell reports SIGINT). */
export const EXIT_CANCELLED = 130;

const FAILURE_HINTS: Partial<Record<string, string>> = {
  expired_token: 'the code expired before it was approved; run switchyard login again for a new one',
  access_denied: 'the sign-in was denied at the provider',
};

/**
 * Runs `switchyard login`; resolves with the exit code: 0 signed in, 1 the
 * sign-in failed (denied, expired, the provider unreachable), 2 a usage or
 * config error, 130 cancelled.
 */
export async function login(args: readonly string[], io: LoginIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string', short: 'c' },
      mode: { type: 'string' },
      'start-url': { type: 'string' },
      region: { type: 'string' },
      priority: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new LoginUsageError('usage: switchyard login <flow> [--config file] [options]');
  const flow = positionals[0]!;
  const path = values.config ?? './config.yaml';
  const config = await loadConfigFile(path, { knownKinds: io.knownKinds });
  const kind = flowKinds(config).get(flow);
  if (!kind) {
    throw new LoginUsageError(
      `${path} has no sign-in flow named ${JSON.stringify(flow)} (flows: ${[...flowKinds(config).keys()].join(', ')})`,
    );
  }
  const body: Record<string, unknown> = {};
  // A terminal user who names no account kind gets the personal one, as the page preselects it.
  if (kind === 'cloud-coding-assistant') body.mode = values.mode ?? 'builder-id';
  else if (values.mode !== undefined) body.mode = values.mode;
  if (values['start-url'] !== undefined) body.start_url = values['start-url'];
  if (values.region !== undefined) body.region = values.region;
  if (values.priority !== undefined) body.priority = Number(values.priority);
  const parsed = signInRequest(kind, body);
  if ('issues' in parsed) {
    const flag = (field: string) => (field === 'start_url' ? '--start-url' : `--${field}`);
    throw new LoginUsageError(parsed.issues.map((issue) => `${flag(issue.field)}: ${issue.message}`).join('; '));
  }

  if (config.cluster.enabled) {
    // The terminal sign-in writes to auth-dir; a cluster keeps its credentials in PostgreSQL.
    throw new LoginUsageError(
      `${path} runs a cluster (cluster.enabled), whose credentials live in PostgreSQL: sign in through a node's /v0/oauth/${flow} page instead`,
    );
  }
  const authDir = resolveAuthDir(config['auth-dir'], path);
  const auth = { ...(config.auth as AuthConfigInput), refresh: { ...config.auth.refresh, enabled: false } };
  // This process's sign-in is its own: the auth-dir's sign-in directory belongs to a gateway that may be running on it.
  const signInDirectory = new MemorySignInDirectory();
  const opened = await openCredentials({ authDir, auth, flows: configuredFlows(config), signInDirectory });
  const signIns = opened.manager.signIns;
  let progress: ReturnType<typeof setInterval> | undefined;
  let cancel: (() => void) | undefined;
  try {
    const { options, priority } = parsed.request;
    const session = await signIns.start(flow, options, priority === undefined ? {} : { priority });
    const { prompt } = session;
    io.stdout(
      [
        `To sign in (${flow}), open`,
        `  ${prompt.verification_uri}`,
        'and enter the code',
        `  ${prompt.user_code}`,
        ...(prompt.verification_uri_complete ? [`(or open ${prompt.verification_uri_complete}, which fills it in)`] : []),
        `The code expires at ${prompt.expires_at}. Waiting for approval; Ctrl-C cancels.`,
        '',
      ].join('\n'),
    );
    cancel = () => signIns.cancel(session.id);
    io.signals.on('SIGINT', cancel);
    io.signals.on('SIGTERM', cancel);
    const expiresAt = Date.parse(prompt.expires_at);
    progress = setInterval(() => {
      const left = Math.max(0, Math.round((expiresAt - Date.now()) / 1000));
      io.stderr(`still waiting for approval (${left} s left)\n`);
    }, io.progressEveryMs ?? 5000);
    try {
      const record = await signIns.wait(session.id);
      io.stdout(
        `Signed in: credential ${record.id} (provider ${record.provider}${record.label ? `, ${record.label}` : ''}) saved to ${join(opened.fileStore!.directory, `${record.id}.json`)} (mode 0600).\n`,
      );
      return 0;
    } catch (error) {
      if (signIns.get(session.id).state === 'cancelled') {
        io.stderr('switchyard: sign-in cancelled\n');
        return EXIT_CANCELLED;
      }
      throw error;
    }
  } catch (error) {
    if (!(error instanceof CredentialsError)) throw error;
    if (error.code === 'flow_not_found' || error.code === 'invalid_argument') throw new LoginUsageError(error.message);
    io.stderr(`switchyard: sign-in failed: ${FAILURE_HINTS[error.code] ?? error.message}\n`);
    return 1;
  } finally {
    clearInterval(progress);
    if (cancel) {
      io.signals.off('SIGINT', cancel);
      io.signals.off('SIGTERM', cancel);
    }
    await opened.close();
  }
}
