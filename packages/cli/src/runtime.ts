/**
 * @module runtime
 * Composes the workflow for one `yard` invocation (or one `yard serve`):
 * the repository and actor, the config, the store (`--db`: a SQLite file,
 * by default `<repo>/.agileplus/agileplus.db`, or a `postgres://` URL), the
 * `Workflow`, git, artifacts, the subcommand registry and audit log, and,
 * built only when asked for, the agent dispatcher, the classifier and sync.
 * The CLI translates into these; it decides nothing itself.
 */
import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import {
  type AgentAdapter,
  AgentDispatcher,
  AgentSessionAdapter,
  BacklogQueue,
  BUILTIN_SUBCOMMANDS,
  Classifier,
  type CodeHostAdapter,
  DispatchTool,
  GatewayClient,
  HeuristicReviewer,
  LlmReviewer,
  ProcessAgentAdapter,
  SUBCOMMAND_LOG_PATH,
  SubcommandAuditLog,
  type SubcommandContext,
  SubcommandRegistry,
  SyncEngine,
  Workflow,
  WorkflowEventEmitter,
  type WorkflowStore,
} from '@switchyard/workflow';
import { ArtifactStore, DEFAULT_ARTIFACT_ROOT, GitRepository } from '@switchyard/workflow/git';
import { CheckRunner } from '@switchyard/workflow/lifecycle';
import { AgentTypeAdapter, type AgentTypeAdapterOptions } from './agentTypeAdapter.js';
import { AGENT_TYPE_NAMES, usualCommand } from './agentTypes.js';
import { loadConfig, resolved, type YardConfig } from './config.js';
import { CliError } from './errors.js';
import { codeHostFrom, trackerFrom, webhookVerifierFrom } from './integrations.js';
import type { CliIO, GlobalOptions } from './io.js';
import { ServedAgentAdapter } from './servedAgent.js';

/** A store the runtime can close. */
export type ClosableStore = WorkflowStore & { close(): Promise<void> };

/** Agent settings a command line can override. */
export interface AgentOverrides {
  kind?: string;
  /** `--agent-type`: run that agent type behind a session server of its own, in the worktree. */
  agentType?: string;
  /** The environment agents run in: the CLI's (`io.env`), never more of `process.env` than it holds. */
  agentEnv?: Readonly<Record<string, string | undefined>>;
  /** Told where each `--agent-type` run's session server is. */
  onAgentServer?: AgentTypeAdapterOptions['onServer'];
  command?: string;
  args?: string[];
  url?: string;
  timeoutMs?: number;
}

/** Everything a command works with. */
export interface Runtime {
  readonly globals: GlobalOptions;
  readonly io: CliIO;
  readonly repoRoot: string;
  readonly repoName: string;
  readonly actor: string;
  readonly config: YardConfig;
  readonly store: ClosableStore;
  readonly events: WorkflowEventEmitter;
  readonly workflow: Workflow;
  readonly git: GitRepository;
  readonly artifacts: ArtifactStore;
  readonly registry: SubcommandRegistry;
  readonly backlog: BacklogQueue;
  /** The context hidden subcommands run in. */
  context(): SubcommandContext;
  /** `.agileplus/audit.jsonl`, opened on first use. */
  auditLog(): Promise<SubcommandAuditLog>;
  dispatchTool(): Promise<DispatchTool>;
  classifier(): Classifier;
  /** The agent dispatcher (throws a usage error naming what to configure when no agent is). */
  dispatcher(overrides?: AgentOverrides): AgentDispatcher;
  /** The agent dispatcher over these adapters (the first is the default kind). */
  dispatcherWith(adapters: AgentAdapter[], overrides?: AgentOverrides): AgentDispatcher;
  sync(): SyncEngine;
  /** The repository's own checks (`ci.checks`), the local CI command; undefined when none are configured. */
  checks(): CheckRunner | undefined;
  /** The configured code host, when there is one. */
  codeHost(): CodeHostAdapter | undefined;
  /** The remote branches go to: `ci.remote` in the config, else `origin` when the repository has it. */
  defaultRemote(): Promise<string | undefined>;
  /** The configured gateway's client, when there is one (research and plan drafts, triage, review). */
  gateway(): GatewayClient | undefined;
  close(): Promise<void>;
}

/**
 * Local state, kept out of `git status` and `commit --all` through `.git/info/exclude`: the
 * database, and the subcommand log, which every invocation appends to (tracked, it would make
 * every tree dirty). Artifacts stay visible to git.
 */
const LOCAL_STATE = [
  '/.agileplus/agileplus.db',
  '/.agileplus/agileplus.db-wal',
  '/.agileplus/agileplus.db-shm',
  '/.agileplus/audit.jsonl',
  '/.agileplus/audit.intents.jsonl',
  '/.agileplus/*.lock',
  '/.agileplus/github-token.json',
];

/** Adds {@link LOCAL_STATE} to `.git/info/exclude` (best effort: where `.git` cannot be written, they only show in `git status`). */
export async function excludeLocalState(gitRepo: GitRepository): Promise<void> {
  for (const line of LOCAL_STATE) await gitRepo.excludeFromStatus(line).catch(() => undefined);
}

function git(args: string[], cwd: string): Promise<string | undefined> {
  return new Promise((done) => {
    execFile('git', args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }, (error, stdout) =>
      done(error ? undefined : stdout.trim()),
    );
  });
}

/**
 * The repository: `--repo`, `YARD_REPO`, or the git top level of the working directory.
 * A directory that is not in a git work tree is refused (not_found) before anything is
 * opened, rather than planting `.agileplus/` (database, audit log) wherever the user points.
 * A subdirectory of a repository stands for the repository, as it does for git itself
 * (`git -C <dir>`) and for a working directory without `--repo`: the result is the top
 * level, so `.agileplus/` is never created inside the subdirectory.
 */
export async function resolveRepo(globals: GlobalOptions, io: CliIO): Promise<string> {
  const given = globals.repo ?? io.env.YARD_REPO;
  if (given !== undefined) {
    const root = resolve(io.cwd, given);
    const info = await stat(root).catch(() => undefined);
    if (!info?.isDirectory()) throw new CliError('not_found', `--repo: ${root} is not a directory`, { field: 'repo' });
    const topLevel = await git(['rev-parse', '--show-toplevel'], root);
    if (!topLevel)
      // The same message and reason git's own refusal gets (workflow's gitFailure), so scripts see one shape.
      throw new CliError('not_found', `${root} is not a git repository`, { field: 'repo', reason: 'not_a_repository' });
    // git prints the top level with symlinks resolved: compare real paths, and keep the spelling given for the top level itself.
    if ((await realpath(root)) === (await realpath(topLevel))) return root;
    if (globals.verbose >= 1) io.stderr(`yard: --repo ${root} is inside the repository ${topLevel}; using its top level\n`);
    return topLevel;
  }
  const topLevel = await git(['rev-parse', '--show-toplevel'], io.cwd);
  if (topLevel === undefined || topLevel === '')
    throw new CliError('not_found', `${io.cwd} is not inside a git repository: run yard in one (git init), or pass --repo <path>`, {
      field: 'repo',
    });
  return topLevel;
}

/** The actor: `--actor`, `YARD_ACTOR`, git's `user.name`, or the OS user. */
export async function resolveActor(globals: GlobalOptions, io: CliIO, repoRoot: string): Promise<string> {
  const actor = globals.actor ?? io.env.YARD_ACTOR ?? (await git(['config', 'user.name'], repoRoot)) ?? userInfo().username;
  if (!actor || /[\r\n\0]/.test(actor) || actor.length > 128)
    throw new CliError('invalid_argument', '--actor: one line of 1-128 characters', { field: 'actor' });
  return actor;
}

/**
 * A database path someone gave (`--db`, `YARD_DB`, `db:` in the config) must be in a directory
 * that exists: SQLite would otherwise create the directories and an empty database, so a typo
 * shows "no features" instead of an error. Only the default `.agileplus/` is created.
 */
async function assertDatabaseDirectory(location: string, cwd: string): Promise<void> {
  if (location === ':memory:' || /^postgres(ql)?:\/\//.test(location)) return;
  const directory = dirname(resolve(cwd, location));
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory())
    throw new CliError('not_found', `--db: the directory ${directory} does not exist; create it first or fix the path`, { field: 'db' });
}

async function openStore(location: string, repoRoot: string, cwd: string): Promise<ClosableStore> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const { PostgresWorkflowStore } = await import('@switchyard/workflow/postgres').catch((error: unknown) => {
      throw new CliError(
        'not_implemented',
        '--db: a postgres:// database needs the optional "pg" package installed',
        { field: 'db' },
        { cause: error },
      );
    });
    return PostgresWorkflowStore.open({ connectionString: location });
  }
  const { SqliteWorkflowStore } = await import('@switchyard/workflow/sqlite');
  return SqliteWorkflowStore.open(location === ':memory:' ? { path: location } : { path: resolve(cwd, location), repoRoot });
}

/**
 * Opens everything one invocation needs.
 *
 * @example
 * ```ts
 * const rt = await openRuntime({ verbose: 0, output: 'json' }, processIO());
 * try { console.log(await rt.workflow.listFeatures()); } finally { await rt.close(); }
 * ```
 */
export async function openRuntime(globals: GlobalOptions, io: CliIO): Promise<Runtime> {
  const repoRoot = await resolveRepo(globals, io);
  const config = await loadConfig(repoRoot, globals.config, io.env, io.cwd);
  const actor = await resolveActor(globals, io, repoRoot);
  const repoName = config.repo_name ?? basename(repoRoot);
  const gitRepo = new GitRepository(repoRoot);
  const given = globals.db ?? io.env.YARD_DB ?? config.db;
  if (given !== undefined) await assertDatabaseDirectory(given, io.cwd);
  const location = given ?? join(repoRoot, '.agileplus', 'agileplus.db');
  const store = await openStore(location, repoRoot, io.cwd);
  await excludeLocalState(gitRepo);
  const events = new WorkflowEventEmitter();
  // Admin keys act under their names, so those names are admins too.
  const adminKeys = config.api_keys.flatMap((entry) => (typeof entry === 'object' && entry.admin ? [entry.name] : []));
  const workflow = new Workflow({ store, repoName, admins: [...config.admins, ...adminKeys], events });
  const artifacts = new ArtifactStore(join(repoRoot, DEFAULT_ARTIFACT_ROOT));
  const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
  let log: Promise<SubcommandAuditLog> | undefined;
  let tool: Promise<DispatchTool> | undefined;
  let dispatcher: AgentDispatcher | undefined;
  let sync: SyncEngine | undefined;
  const gatewayConfig = () => (config.gateway ? resolved(config.gateway) : undefined);
  const gateway = () => {
    const g = gatewayConfig();
    return g
      ? new GatewayClient({
          baseUrl: g.url,
          model: g.model,
          ...(g.api_key ? { apiKey: g.api_key } : {}),
        })
      : undefined;
  };
  const codeHost = () => codeHostFrom(config.code_host, repoRoot);

  const checks = () =>
    config.ci?.checks.length
      ? new CheckRunner({ checks: config.ci.checks, ...(config.ci.timeout_ms ? { timeoutMs: config.ci.timeout_ms } : {}) })
      : undefined;

  const context = (): SubcommandContext => ({ workflow, git: gitRepo, artifacts, actor, readStdin: () => io.readStdin(), env: io.env });
  const runtime: Runtime = {
    globals,
    io,
    repoRoot,
    repoName,
    actor,
    config,
    store,
    events,
    workflow,
    git: gitRepo,
    artifacts,
    registry,
    backlog: new BacklogQueue(store, workflow.clock),
    context,
    auditLog: () => {
      log ??= SubcommandAuditLog.open(repoRoot, { repoName, events }).catch((error: unknown) => {
        log = undefined;
        throw tornLogAdvice(error);
      });
      return log;
    },
    dispatchTool: () => {
      tool ??= runtime.auditLog().then((auditLog) => new DispatchTool({ registry, log: auditLog, context: context() }));
      return tool;
    },
    classifier: () => {
      const g = gateway();
      return new Classifier(g ? { gateway: g } : {});
    },
    dispatcher: (overrides = {}) => runtime.dispatcherWith(agentAdapters(config, { agentEnv: io.env, ...overrides }), overrides),
    dispatcherWith: (adapters, overrides = {}) => {
      const timeout = overrides.timeoutMs ?? config.agent?.timeout_ms;
      const g = gateway();
      const ci = codeHost();
      const local = checks();
      dispatcher ??= new AgentDispatcher({
        workflow,
        git: gitRepo,
        reviewer: g ? new LlmReviewer(g) : new HeuristicReviewer(),
        // With a code host its CI is the evidence (the package's branch pushed first, so the host has the
        // commit to run it on); without one, the local CI command in the worktree is.
        ...(ci ? { ciSource: ci, ciRemote: () => runtime.defaultRemote() } : local ? { localChecks: local } : {}),
        adapters,
        defaults: {
          ...(timeout !== undefined ? { timeout_ms: timeout } : {}),
          ...(config.agent?.review_cycles ? { review_cycles: config.agent.review_cycles } : {}),
        },
      });
      return dispatcher;
    },
    sync: () => {
      if (sync) return sync;
      const tracker = trackerFrom(config.tracker);
      const ci = codeHost();
      const webhookVerifier = webhookVerifierFrom(config.tracker, config.webhook_secret);
      sync = new SyncEngine({
        workflow,
        ...(tracker ? { tracker } : {}),
        ...(ci ? { codeHost: ci } : {}),
        ...(webhookVerifier ? { webhookVerifier } : {}),
      });
      return sync;
    },
    checks,
    gateway,
    codeHost,
    defaultRemote: async () => {
      if (config.ci?.remote) return config.ci.remote;
      const remotes = (await gitRepo.run(['remote'])).split('\n').filter(Boolean);
      return remotes.includes('origin') ? 'origin' : undefined;
    },
    close: async () => {
      if (log) await (await log).close();
      await store.close();
    },
  };
  return runtime;
}

/**
 * audit-chain's own advice for a torn log names its `audit-chain repair` bin, which `yard`
 * users do not have on their PATH (it belongs to a dependency of a dependency): name the
 * `yard` command that does the same repair instead. Other errors pass through unchanged.
 */
export function tornLogAdvice(error: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code !== 'TORN_TAIL') return error;
  return new CliError(
    'audit_log_torn',
    `${SUBCOMMAND_LOG_PATH} ends with an incomplete line, most likely from a crash mid-write: run \`yard audit repair\`, then retry`,
    { path: SUBCOMMAND_LOG_PATH, fix: 'yard audit repair' },
    { cause: error },
  );
}

/** The agent adapters from the config and the command line (the command line wins). */
export function agentAdapters(config: YardConfig, overrides: AgentOverrides): AgentAdapter[] {
  if (overrides.agentType !== undefined) return [agentTypeAdapter(overrides.agentType, overrides)];
  const kind = overrides.kind ?? (overrides.url ? 'agent-session' : overrides.command ? 'process' : (config.agent?.kind ?? 'process'));
  if (kind === 'process') {
    const command = overrides.command ?? config.agent?.command;
    if (!command)
      throw new CliError('invalid_argument', 'no agent command: pass --agent-command or set agent.command in .agileplus/config.yaml', {
        field: 'agent_command',
      });
    return [
      new ProcessAgentAdapter({
        command,
        args: overrides.args ?? config.agent?.args ?? [],
        ...(overrides.agentEnv ? { baseEnv: overrides.agentEnv } : {}),
      }),
    ];
  }
  if (kind === 'agent-session') {
    const url = overrides.url ?? config.agent?.url;
    const command = overrides.command ?? config.agent?.command;
    // No server given: start one per task, in the work package's worktree.
    if (!url && command) {
      return [
        new ServedAgentAdapter({
          command,
          args: overrides.args ?? config.agent?.args ?? [],
          ...(overrides.agentEnv ? { env: overrides.agentEnv } : {}),
        }),
      ];
    }
    if (!url)
      throw new CliError(
        'invalid_argument',
        'no agent session server: pass --agent-url (a running server) or --agent-command (started in each worktree), or set agent.url or agent.command in .agileplus/config.yaml',
        { field: 'agent_url' },
      );
    const apiKey = config.agent?.api_key !== undefined ? resolved(config.agent.api_key) : undefined;
    return [new AgentSessionAdapter({ baseUrl: url, ...(apiKey ? { apiKey } : {}) })];
  }
  throw new CliError('invalid_argument', `--agent: expected process or agent-session; got ${JSON.stringify(kind)}`, { field: 'agent' });
}

/** `--agent-type <type>`: the type's own command unless `--agent-command` names another (a wrapper, a path). */
function agentTypeAdapter(type: string, overrides: AgentOverrides): AgentAdapter {
  const agentType = type.toLowerCase();
  const defaultCommand = usualCommand(agentType);
  if (!defaultCommand)
    throw new CliError('invalid_argument', `--agent-type: expected one of ${AGENT_TYPE_NAMES.join(', ')}; got ${JSON.stringify(type)}`, {
      field: 'agent_type',
    });
  if (overrides.kind !== undefined && overrides.kind !== 'agent-session')
    throw new CliError(
      'invalid_argument',
      `--agent-type runs the agent behind the agent session server: it cannot be combined with --agent ${overrides.kind}`,
      {
        field: 'agent_type',
      },
    );
  if (overrides.url !== undefined)
    throw new CliError(
      'invalid_argument',
      '--agent-type starts a session server of its own: drop --agent-url (or --agent-type, to use that server)',
      {
        field: 'agent_type',
      },
    );
  return new AgentTypeAdapter({
    agentType,
    command: overrides.command ?? defaultCommand,
    args: overrides.args ?? [],
    ...(overrides.agentEnv ? { env: overrides.agentEnv } : {}),
    ...(overrides.onAgentServer ? { onServer: overrides.onAgentServer } : {}),
  });
}
