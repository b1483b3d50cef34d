/**
 * @module program
 * The visible command tree of `yard`, declared with commander. Only names,
 * options and descriptions live here: each action imports its module when
 * it runs, so `yard --help` loads nothing but commander (see
 * bench/cli-startup.bench.ts). Hidden subcommands are not declared here at
 * all: `main` routes `<category>:<action>` before this tree is built.
 */
import { Command, Option } from 'commander';
import type { CliIO, GlobalOptions } from './io.js';

/** What every action receives. */
export interface CommandContext {
  io: CliIO;
  globals: GlobalOptions;
}

/** An action: returns the exit code. */
export type Action = (ctx: CommandContext, ...args: never[]) => Promise<number>;

const EXIT_CODES_HELP = `
Exit codes:
  0  success              3  not found            5  conflict (state, dependency, already exists)
  1  internal failure     4  governance gate      6  forbidden
  2  usage (bad argument)    failed

With --output json every command prints one JSON document on stdout, and
errors as {"error":{"code","message"}} on stderr.
Agents reach the tool subcommands through \`yard dispatch\` and \`yard mcp\`.`;

const SYNC_HELP = `
The tracker is configured in .agileplus/config.yaml (docs/trackers.md):
  tracker:
    kind: linear | plane | rest       rest is the documented custom REST shape (the default)
    auth: oauth_client_credentials | api_key | access_token   (default OAuth 2.0 client credentials)
    client_id, client_secret, token_url, scope        OAuth 2.0 (secrets may be env:NAME)
    team_id                                           linear: the team's UUID
    workspace, project_id, app_installation_id        plane
    base_url, token_url                               rest
    state_mapping: {IMPLEMENTING: "In Progress", ...} feature state -> tracker state name
  webhook_secret: env:TRACKER_WEBHOOK_SECRET          verifies POST /webhooks/tracker (yard serve)
A state change made in the tracker moves the feature through the gates, or is refused with a comment.`;

const CODE_HOST_HELP = `
GitHub is configured in .agileplus/config.yaml (docs/trackers.md):
  code_host:
    owner, repo
    base_url: https://ghe.example/api/v3      GitHub Enterprise Server (default api.github.com)
    auth: token | oauth_device | app           inferred from the keys given
    token: env:GITHUB_TOKEN                    token: a personal access token
    client_id: Ov23li...                       oauth_device: the OAuth app; run yard code-host login
    app_id, installation_id, private_key_file  app: a GitHub App installation
    allow_private_hosts: [ghe.internal]        private hosts the SSRF guard lets through`;

/**
 * Builds the program. `run` receives the module to import and the export
 * to call; `main` supplies it so actions stay lazy.
 */
export function buildProgram(
  run: (load: () => Promise<Record<string, unknown>>, exportName: string, args: unknown[]) => Promise<void>,
): Command {
  // Commander passes the positional arguments, the options, then the command itself (dropped).
  const lazy =
    (load: () => Promise<Record<string, unknown>>, exportName: string, ...bound: unknown[]) =>
    async (...args: unknown[]) =>
      run(load, exportName, [...bound, ...args.slice(0, -1)]);
  const lifecycle = () => import('./commands/lifecycle.js');
  const features = () => import('./commands/features.js');
  const triage = () => import('./commands/triage.js');
  const jobs = () => import('./commands/jobs.js');
  const tools = () => import('./commands/tools.js');
  const servers = () => import('./commands/servers.js');
  const audit = () => import('./commands/audit.js');
  const codeHost = () => import('./commands/codeHost.js');

  const program = new Command('yard')
    .description('The feature workflow: lifecycle, work packages, governance gates, audit trail, agents and sync.')
    .option('-v, --verbose', 'more detail; -vv adds debug output')
    .option('--db <path>', 'database: a SQLite file or a postgres:// URL (default <repo>/.agileplus/agileplus.db)')
    .option('--repo <path>', 'the git repository; a subdirectory means its top level (default: the one around the working directory)')
    .option('--actor <name>', 'who is acting (default: git user.name, then the OS user)')
    .option('--config <file>', 'config file (default <repo>/.agileplus/config.yaml)')
    .addOption(new Option('--output <format>', 'output format').choices(['table', 'json', 'markdown']).default('table'))
    .addHelpText('after', EXIT_CODES_HELP)
    .showSuggestionAfterError(true);

  program
    .command('init')
    .description("Write .agileplus/config.yaml: the repository's test and lint commands as the local CI command, you as admin")
    .option('--force', 'rewrite the ci section of an existing config (the rest is kept)')
    .action(lazy(() => import('./commands/init.js'), 'initCommand'));

  const work = () => import('./commands/lifecycleWork.js');
  const step = (name: string, summary: string) =>
    program
      .command(`${name} <slug>`)
      .description(summary)
      .option('--force', "only move the feature, skipping steps and this step's work (recorded; gates still apply)")
      .option('--evidence <ids>', 'with --force: evidence ids to cite in the audit entry, comma separated');

  program
    .command('specify <slug>')
    .description('Create a feature (or update its spec) and move it to SPECIFIED')
    .option('--title <title>', 'title (required for a new feature)')
    .option('--description <text>', 'what the feature is about; saved as a new spec contract version')
    .option('--from-file <path>', 'read the spec from this file instead of --description')
    .option('--target-branch <branch>', 'branch the work merges into (default main)')
    .action(lazy(lifecycle, 'specifyCommand'));
  step(
    'research',
    'Write <slug>/research.md (the spec, the files and symbols it touches, their history; drafted through the gateway when configured) and move to RESEARCHED',
  ).action(lazy(work, 'researchCommand'));
  program
    .command('plan <slug>')
    .description(
      "Move a feature to PLANNED and add its work packages: --wp titles, else the model's plan (with a gateway), else the spec's task checklist (- [ ] title (after 1, 2) (files: a, b))",
    )
    .option('--wp <title>', 'add a work package (repeatable); replaces the gateway and the checklist', collect, [])
    .option('--force', 'skip steps (recorded; gates of skipped steps still apply)')
    .option('--evidence <ids>', 'evidence ids to cite in the audit entry, comma separated')
    .action(lazy(lifecycle, 'planCommand'));
  program
    .command('implement <slug>')
    .description('Move a feature to IMPLEMENTING and run agents on its work packages, with review cycles')
    .option('--wp <sequence>', 'work package to run (repeatable; default: every ready one, wave by wave)', collect, [])
    .option('--parallel <n>', 'agents running at once', '1')
    .option('--max-review-cycles <n>', 'review cycles before a package is BLOCKED')
    .option('--agent <kind>', 'process or agent-session (default from the config)')
    .option(
      '--agent-type <type>',
      "run this coding agent behind an agent session server of its own, in the work package's worktree: claude, codex, gemini, qwen, opencode, aider, goose, amp, copilot, cursor, auggie or amazonq (its usual command unless --agent-command names another)",
    )
    .option(
      '--agent-command <command>',
      'the agent executable (process agents: the prompt arrives on stdin; with --agent-type: instead of the usual command)',
    )
    .option('--agent-arg <arg>', 'an argument for the agent command (repeatable)', collect, [])
    .option('--agent-url <url>', 'the agent session server (agent-session agents)')
    .option('--timeout <ms>', 'time limit of one agent run')
    .option('--no-wait', 'start the jobs and return; follow them with yard jobs')
    .action(lazy(lifecycle, 'implementCommand'));
  step(
    'validate',
    'Run the configured checks (ci.checks) on the feature branch in a worktree, record each as evidence, and move to VALIDATED',
  ).action(lazy(work, 'validateCommand'));
  step(
    'ship',
    'Merge the work-package branches and the feature branch into the target branch (push; PR with a code host; close the tracker item) and move to SHIPPED',
  )
    .option('--remote <name>', 'remote to push to (default ci.remote, else origin when there is one)')
    .option('--no-push', 'merge locally only')
    .action(lazy(work, 'shipCommand'));
  step('retrospective', 'Write <slug>/retrospective.md from the audit trail and the agent jobs, and move to RETROSPECTED').action(
    lazy(work, 'retrospectiveCommand'),
  );

  const feature = program.command('feature').description('Features and their state');
  feature
    .command('list')
    .description('List features')
    .option('--state <state>', 'only features in this state')
    .action(lazy(features, 'featureList'));
  feature.command('show <slug>').description('A feature, its work packages and its next gate').action(lazy(features, 'featureShow'));

  const wp = program.command('wp').description('Work packages of a feature');
  wp.command('add <slug>')
    .description('Add a work package')
    .requiredOption('--title <title>', 'what the package delivers')
    .option('--depends-on <sequences>', 'packages it waits for, comma separated')
    .option('--file-scope <paths>', 'repository paths it touches, comma separated')
    .action(lazy(features, 'wpAdd'));
  wp.command('list <slug>').description('Work packages in sequence, with their wave').action(lazy(features, 'wpList'));
  wp.command('move <slug> <sequence> <state>')
    .description('Move a work package (PLANNED, DOING, REVIEW, DONE, BLOCKED)')
    .option('--evidence <ids>', 'evidence ids to cite, comma separated')
    .action(lazy(features, 'wpMove'));

  program
    .command('evidence <slug>')
    .description('Attach evidence (CI output, test results, approvals) to a feature or work package')
    .requiredOption('--type <type>', 'test_result, ci_output, review_approval, security_scan, lint_result or manual_attestation')
    .requiredOption('--reference <ref>', 'where it lives: a URL, a CI run id, an artifact path')
    .option('--wp <sequence>', 'attach to this work package')
    .option('--summary <text>', 'one line about it')
    .addOption(new Option('--passed', 'it passed'))
    .addOption(new Option('--failed', 'it failed (never satisfies a gate)').conflicts('passed'))
    .action(lazy(features, 'evidenceAdd'));

  program
    .command('triage <text...>')
    .description('Classify an item (bug, feature, idea, task) with a priority and add it to the backlog')
    .addOption(new Option('--type <type>', 'override the classifier').choices(['bug', 'feature', 'idea', 'task']))
    .option('--dry-run', 'classify only; add nothing')
    .action(lazy(triage, 'triageCommand'));
  const queue = program.command('queue').description('The backlog queue');
  queue
    .command('add <title>')
    .description('Add an item')
    .addOption(new Option('--type <type>', 'item type').choices(['bug', 'feature', 'idea', 'task']).makeOptionMandatory())
    .option('--priority <n>', '0-100, higher first', '50')
    .option('--description <text>', 'details')
    .option('--feature <slug>', 'related feature')
    .action(lazy(triage, 'queueAdd'));
  queue
    .command('list')
    .description('Items in queue order (priority, then age)')
    .addOption(new Option('--status <status>', 'filter').choices(['open', 'in_progress', 'done', 'dismissed']))
    .addOption(new Option('--type <type>', 'filter').choices(['bug', 'feature', 'idea', 'task']))
    .action(lazy(triage, 'queueList'));
  queue.command('show <id>').description('One item').action(lazy(triage, 'queueShow'));
  queue.command('pop').description('Take the next open item and mark it in progress').action(lazy(triage, 'queuePop'));

  const jobsCommand = program.command('jobs').description('Agent jobs');
  jobsCommand
    .command('list')
    .description('Jobs, newest first')
    .option('--feature <slug>', 'only this feature')
    .addOption(new Option('--state <state>', 'only this state').choices(['Pending', 'Running', 'Completed', 'Failed', 'Cancelled']))
    .action(lazy(jobs, 'jobsList'));
  jobsCommand.command('show <id>').description('One job with its result').action(lazy(jobs, 'jobsShow'));
  jobsCommand.command('cancel <id>').description('Cancel a pending or running job').action(lazy(jobs, 'jobsCancel'));

  const sync = program.command('sync').description('Sync features with the tracker and the code host');
  for (const [name, summary] of [
    ['push', 'Push a feature (creates the remote issue the first time; refuses to overwrite remote changes)'],
    ['pull', 'Pull remote title and description (refuses to overwrite local changes)'],
  ] as const) {
    sync
      .command(`${name} <slug>`)
      .description(summary)
      .addOption(new Option('--system <system>', 'which remote').choices(['tracker', 'code_host']).default('tracker'))
      .action(lazy(jobs, name === 'push' ? 'syncPush' : 'syncPull'));
  }
  sync
    .command('status')
    .description('Every link with its last sync')
    .addOption(new Option('--system <system>', 'which remote').choices(['tracker', 'code_host']))
    .action(lazy(jobs, 'syncStatus'));
  sync.addHelpText('after', SYNC_HELP);

  program
    .command('code-host')
    .description('The code host (GitHub): sign-in')
    .addHelpText('after', CODE_HOST_HELP)
    .command('login')
    .description('Sign in as the configured OAuth app through the device flow; the user token is kept in code_host.token_file (0600)')
    .option('--scopes <list>', 'comma-separated OAuth scopes (default code_host.scopes, else repo)')
    .action(lazy(codeHost, 'codeHostLogin'));

  program
    .command('audit')
    .description('The subcommand audit log, .agileplus/audit.jsonl')
    .command('repair')
    .description('Fix a torn last line of .agileplus/audit.jsonl after a crash (never drops a complete entry; the repair is recorded)')
    .action(lazy(audit, 'auditRepair'));

  program
    .command('dispatch [json]')
    .description(
      'Run the dispatch tool: {"command":"dispatch_command","feature_slug",...,"args":{"command":"<category>:<action>",...}} (argument or stdin)',
    )
    .option('--schema', "print the tool's JSON schema instead")
    .action(lazy(tools, 'dispatchCommand'));
  program.command('mcp').description('Serve the dispatch tool to coding agents over MCP (stdio)').action(lazy(tools, 'mcpCommand'));

  program
    .command('serve')
    .description('Serve the workflow over HTTP and gRPC (one store; /metrics on the HTTP port)')
    .option('--http <port>', 'HTTP port (0 picks one)')
    .option('--grpc <port>', 'gRPC port (0 picks one)')
    .option('--host <host>', 'address to listen on (another than loopback needs api_keys in the config, or --insecure)', '127.0.0.1')
    .option('--insecure', 'serve a non-loopback address without api_keys anyway (anyone who reaches it can drive the workflow)')
    .option('--agent-command <command>', 'agent executable for jobs started through the servers')
    .action(lazy(servers, 'serveCommand'));
  const agent = program.command('agent').description('Terminal agents');
  agent
    .command('serve')
    .description('Serve one terminal agent over HTTP: yard agent serve [options] -- <command> [args…]')
    .option('--port <port>', 'port', '3284')
    .option('--host <host>', 'address to listen on (another than loopback needs --api-key-env, or --insecure)', '127.0.0.1')
    .option('--insecure', 'serve a non-loopback address without an API key anyway (anyone who reaches it can type into the agent)')
    .option(
      '--type <kind>',
      'agent type: claude, codex, gemini, qwen, opencode, aider, goose, amp, copilot, cursor, auggie, amazonq, custom or generic (default: from the command name)',
    )
    .option('--term-width <columns>', 'terminal width (PTY)', '120')
    .option('--term-height <rows>', 'terminal height (PTY)', '40')
    .option('--allowed-origin <origin>', 'origin allowed to call the API from a browser, or * (repeatable)', collect, [])
    .option('--initial-prompt <text>', 'first user message, sent once the agent is ready')
    .option('--state-file <path>', 'save the /messages history here and restore it on restart')
    .option('--rules <file>', 'message rules of your own (JSON: input_box, chrome, busy, bullet, prompt); the type becomes custom')
    .addOption(new Option('--transport <transport>', 'how to talk to the agent').choices(['pty', 'acp']).default('pty'))
    .addOption(
      new Option('--acp-permissions <policy>', 'ACP permission requests: reject, allow, or ask (a dialog answered through POST /dialog)')
        .choices(['reject', 'allow', 'ask'])
        .default('reject'),
    )
    .option(
      '--acp-permission-timeout <seconds>',
      'with --acp-permissions ask: seconds a permission request waits for an answer before it is denied',
      '300',
    )
    .option('--allowed-host <host>', 'Host header to accept (repeatable)', collect, [])
    .option('--api-key-env <name>', 'require Authorization: Bearer <key> on the API, the key read from this environment variable')
    .argument('<command...>', 'the agent command and its arguments, after --')
    .action(lazy(servers, 'agentServeCommand'));
  agent
    .command('attach')
    .description("Mirror an agent session server's live screen here and forward keystrokes (Ctrl-] detaches)")
    .argument('<url>', 'the agent session server, e.g. http://127.0.0.1:3284')
    .option('--api-key-env <name>', 'send Authorization: Bearer <key>, the key read from this environment variable')
    .action(lazy(servers, 'agentAttachCommand'));

  return program;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
