/**
 * @module cli
 * The `switchyard` command: `serve` runs the gateway, `login` runs a
 * device sign-in in the terminal, `config check` validates a config without
 * starting anything, `config schema` prints its JSON Schema, `credentials
 * rekey` re-encrypts the stored credentials under a new key, `keys`
 * creates, lists and revokes client keys through a running gateway. Exit codes: 0 ok, 1 the server (or the sign-in) failed
 * at run time, 2 a usage or config error, 130 a cancelled sign-in.
 */
import { parseArgs } from 'node:util';
import { CredentialsError } from '@switchyard/credentials';
import { defaultAdapters } from '@switchyard/relay';
import { KEYS_USAGE, KeysUsageError, keysCommand } from './clientKeys/keysCommand.js';
import { ClusterUnavailableError } from './gateway/cluster.js';
import { ConfigError, loadConfigFile } from './gateway/config/load.js';
import { gatewayConfigJsonSchema } from './gateway/config/schema.js';
import { Gateway, UnsafeBindError } from './gateway/gateway.js';
import { GuardedHostsUnreadableError } from './gateway/guardedHostStore.js';
import { GatewayListenError } from './gateway/listen.js';
import { LoginUsageError, login } from './gateway/login.js';
import { TracingUnavailableError } from './gateway/openTracing.js';
import { credentialsCommand, REKEY_USAGE, RekeyUsageError } from './gateway/rekeyCommand.js';

/** Each subcommand's usage, shown by `switchyard <command> --help` and, together, by `switchyard --help`. */
const COMMAND_USAGE = {
  serve: `  switchyard serve [--config ./config.yaml] [--insecure]
      Runs the gateway. The config file is watched: edits apply without a
      restart, and a bad edit is logged while the running config stays.
      --insecure allows a non-loopback host with no api-keys (do not).
`,
  login: `  switchyard login <flow> [--config ./config.yaml] [options]
      Signs in with a device flow (RFC 8628) in the terminal: prints a code
      and a URL, waits while you approve the code in a browser, then writes
      the credential into the config's auth-dir (mode 0600), where a running
      gateway picks it up. <flow> is code-assistant, cloud-coding-assistant,
      or a flow a provider declares (providers.<p>.oauth). Ctrl-C cancels.
      --mode builder-id|identity-center   cloud-coding-assistant's account
                                          kind (default builder-id)
      --start-url URL --region REGION     identity-center's https start URL
                                          and region (e.g. eu-central-1)
      --priority N                        the new credential's priority
`,
  config: `  switchyard config check [file]
      Validates a config (default ./config.yaml) and lists every problem.
  switchyard config schema
      Prints the config's JSON Schema, for editors: put
      # yaml-language-server: $schema=<path of the saved schema>
      at the top of a config file to have its keys completed and checked.
`,
  credentials: `  switchyard credentials rekey --config FILE (--new-key-env NAME | --new-key-file PATH)
      Re-encrypts every stored credential (auth-dir files, or the cluster's
      PostgreSQL rows) under a new key, read from the environment or a
      file, never from argv. switchyard credentials --help has the steps.
`,
  keys: `  switchyard keys create|list|revoke [options]
      Client keys of a running gateway, through its management API (--url,
      the management key from $SWITCHYARD_MANAGEMENT_KEY or --key-file):
      the secret is printed once, at create. switchyard keys --help has all.
`,
} as const;

const EXIT_CODES = `Exit codes: 0 ok, 1 run-time failure (a failed, denied or expired sign-in),
2 usage or config error, 130 sign-in cancelled.
`;

const USAGE = `switchyard: the Switchyard LLM gateway

Usage:
${Object.values(COMMAND_USAGE).join('')}  switchyard --help | --version | <command> --help

${EXIT_CODES}`;

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h';

/** `switchyard <command> --help`: that command's usage (the rekey steps for `credentials`), else undefined. */
function commandHelp(command: string, rest: readonly string[]): string | undefined {
  // `credentials` and `keys` print their own, longer help.
  if (!rest.some(isHelp) || command === 'credentials' || command === 'keys') return undefined;
  if (!Object.hasOwn(COMMAND_USAGE, command)) return undefined;
  return `Usage:\n${COMMAND_USAGE[command as keyof typeof COMMAND_USAGE]}\n${EXIT_CODES}`;
}

/** Where the CLI writes. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const knownKinds = () => defaultAdapters().kinds();

/** Runs the CLI; resolves with the exit code (for `serve`, once the server has stopped). */
export async function main(argv: readonly string[], io: CliIo, signals: NodeJS.EventEmitter = process): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.stdout(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version') {
    io.stdout('switchyard 0.1.0\n');
    return 0;
  }
  const help = commandHelp(command, rest);
  if (help !== undefined) {
    io.stdout(help);
    return 0;
  }
  try {
    if (command === 'config') {
      const [sub, ...files] = rest;
      if (sub === 'schema' && files.length === 0) {
        io.stdout(`${JSON.stringify(gatewayConfigJsonSchema(), null, 2)}\n`);
        return 0;
      }
      if (sub !== 'check' || files.length > 1) throw new UsageError('usage: switchyard config check [file] | switchyard config schema');
      const file = files[0] ?? './config.yaml';
      const config = await loadConfigFile(file, { knownKinds: knownKinds() });
      io.stdout(`${file}: valid (${Object.keys(config.providers).length} providers, listening on ${config.host}:${config.port})\n`);
      return 0;
    }
    if (command === 'login') {
      return await login(rest, { ...io, signals, knownKinds: knownKinds() });
    }
    if (command === 'credentials') {
      return await credentialsCommand(rest, { ...io, env: process.env, knownKinds: knownKinds() });
    }
    if (command === 'keys') {
      return await keysCommand(rest, { ...io, env: process.env });
    }
    if (command === 'serve') {
      const { values } = parseArgs({
        args: [...rest],
        options: { config: { type: 'string', short: 'c' }, insecure: { type: 'boolean' } },
        strict: true,
      });
      const path = values.config ?? './config.yaml';
      const config = await loadConfigFile(path, { knownKinds: knownKinds() });
      const gateway = await Gateway.start({ config, configPath: path, insecure: values.insecure === true });
      io.stdout(`switchyard gateway listening on ${gateway.url} (config ${path})\n`);
      // Where a person goes next; the key itself is never printed.
      io.stdout(
        config['remote-management']['secret-key'] === ''
          ? 'dashboard off: set remote-management.secret-key to turn it on\n'
          : `dashboard on ${gateway.url}/dashboard (sign in with the management key, remote-management.secret-key in ${path})\n`,
      );
      if (config.metrics.enabled) io.stdout(`metrics on http://${config.metrics.host}:${config.metrics.port}${config.metrics.path}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          signals.off('SIGINT', stop);
          signals.off('SIGTERM', stop);
          io.stdout('stopping…\n');
          void gateway.close().then(resolve, resolve);
        };
        signals.on('SIGINT', stop);
        signals.on('SIGTERM', stop);
      });
      return 0;
    }
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  } catch (error) {
    if (
      error instanceof ConfigError ||
      error instanceof UsageError ||
      error instanceof LoginUsageError ||
      error instanceof RekeyUsageError ||
      error instanceof KeysUsageError ||
      error instanceof UnsafeBindError ||
      error instanceof TracingUnavailableError
    ) {
      io.stderr(`switchyard: ${error.message}\n`);
      if (error instanceof UsageError || error instanceof LoginUsageError) io.stderr(`\n${USAGE}`);
      if (error instanceof RekeyUsageError) io.stderr(`\n${REKEY_USAGE}`);
      if (error instanceof KeysUsageError) io.stderr(`\n${KEYS_USAGE}`);
      return 2;
    }
    // The auth directory is being rekeyed by another process, or its guarded hosts cannot be read: the message says what to do.
    if (
      error instanceof ClusterUnavailableError ||
      error instanceof GuardedHostsUnreadableError ||
      (error instanceof CredentialsError && error.code === 'in_use')
    ) {
      io.stderr(`switchyard: ${error.message}\n`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      // The gateway's own bind names the address and the fix; another bind (the metrics port) is Node's message.
      io.stderr(`switchyard: ${error instanceof GatewayListenError ? '' : 'cannot listen: '}${(error as Error).message}\n`);
      return 2;
    }
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      const usage = command === 'credentials' ? REKEY_USAGE : command === 'keys' ? KEYS_USAGE : USAGE;
      io.stderr(`switchyard: ${(error as Error).message}\n\n${usage}`);
      return 2;
    }
    io.stderr(`switchyard: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

class UsageError extends Error {}
