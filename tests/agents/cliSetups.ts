/**
 * @module cliSetups
 * How each real coding-agent CLI is started for these tests: its command
 * (from test-support's pinned devDependencies), the environment that points
 * it at the gateway with telemetry and update checks off, and the files in
 * its temporary HOME that answer its first-run questions (theme, sign-in,
 * folder trust) before it asks them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentCliName } from '@switchyard/test-support';

/** The gateway's client key every CLI is given. */
export const GATEWAY_KEY = 'sk-agent-cli-test';

/** Where one run lives. */
export interface CliPlace {
  /** The gateway's base URL (no path). */
  gatewayUrl: string;
  /** The temporary HOME (XDG directories under it). */
  home: string;
  /** The working directory the agent starts in. */
  workdir: string;
  /** Whether the CLI should already trust `workdir` (false leaves its trust prompt up, for dialog tests). */
  trusted: boolean;
  /**
   * An npm registry on loopback that has no packages: OpenCode installs its plugin package in the
   * background and waits for it before the first turn; through the closed proxy it would retry for
   * a minute, here it fails at once (404) and OpenCode goes on with what it bundles.
   */
  emptyRegistry: string;
}

/** One CLI's start-up. */
export interface CliSetup {
  /** Arguments after the command. */
  args: string[];
  /** Environment beyond the common one. */
  env: Record<string, string>;
  /** Writes the CLI's config files under `place.home`. */
  prepare(place: CliPlace): Promise<void>;
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
}

/** The environment every CLI gets: a temp HOME and XDG dirs, no colour tricks, no way off loopback. */
export function commonEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_STATE_HOME: join(home, '.local/state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    LANG: 'C.UTF-8',
    COLORTERM: 'truecolor',
    // Anything that is not loopback goes to a closed port.
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    ALL_PROXY: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    NO_UPDATE_NOTIFIER: '1',
    DO_NOT_TRACK: '1',
  };
}

export const CLI_SETUPS: Record<AgentCliName, (place: CliPlace) => CliSetup> = {
  claude: (place) => ({
    args: [],
    env: {
      ANTHROPIC_BASE_URL: place.gatewayUrl,
      ANTHROPIC_AUTH_TOKEN: GATEWAY_KEY,
      ANTHROPIC_MODEL: 'claude-sonnet-4-5',
      ANTHROPIC_SMALL_FAST_MODEL: 'claude-haiku-4-5',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    },
    async prepare({ home, workdir, trusted }) {
      await writeJson(join(home, '.claude.json'), {
        hasCompletedOnboarding: true,
        theme: 'dark',
        autoUpdates: false,
        projects: { [workdir]: { hasTrustDialogAccepted: trusted, hasCompletedProjectOnboarding: true } },
      });
    },
  }),
  codex: (place) => ({
    args: [],
    env: { CODEX_HOME: join(place.home, '.codex'), SWITCHYARD_API_KEY: GATEWAY_KEY },
    async prepare({ home, workdir, gatewayUrl, trusted }) {
      await mkdir(join(home, '.codex'), { recursive: true });
      await writeFile(
        join(home, '.codex', 'config.toml'),
        `model = "gpt-5-codex"
model_provider = "switchyard"
check_for_update_on_startup = false

[model_providers.switchyard]
name = "Switchyard"
base_url = "${gatewayUrl}/v1"
env_key = "SWITCHYARD_API_KEY"
wire_api = "responses"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[projects."${workdir}"]
trust_level = "${trusted ? 'trusted' : 'untrusted'}"
`,
      );
    },
  }),
  gemini: (place) => ({
    args: ['-m', 'gemini-2.5-flash'],
    env: { GOOGLE_GEMINI_BASE_URL: place.gatewayUrl, GEMINI_API_KEY: GATEWAY_KEY, GEMINI_CLI_NO_RELAUNCH: 'true' },
    async prepare({ home }) {
      await writeJson(join(home, '.gemini', 'settings.json'), {
        security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
        ui: { theme: 'Default' },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      });
    },
  }),
  qwen: (place) => ({
    args: [],
    env: { OPENAI_BASE_URL: `${place.gatewayUrl}/v1`, OPENAI_API_KEY: GATEWAY_KEY, OPENAI_MODEL: 'qwen3-coder-plus' },
    async prepare({ home }) {
      await writeJson(join(home, '.qwen', 'settings.json'), {
        security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
        ui: { theme: 'Default' },
        general: { enableAutoUpdate: false, disableAutoUpdate: true, disableUpdateNag: true },
        tools: { approvalMode: 'default' },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      });
    },
  }),
  opencode: (place) => ({
    args: [],
    env: {
      SWITCHYARD_API_KEY: GATEWAY_KEY,
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_TERMINAL_TITLE: '1',
      npm_config_registry: place.emptyRegistry,
    },
    async prepare({ home, gatewayUrl }) {
      await writeJson(join(home, '.config', 'opencode', 'opencode.json'), {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        provider: {
          switchyard: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Switchyard',
            options: { baseURL: `${gatewayUrl}/v1`, apiKey: '{env:SWITCHYARD_API_KEY}' },
            models: { 'claude-sonnet-4-5': { name: 'claude-sonnet-4-5' } },
          },
        },
        model: 'switchyard/claude-sonnet-4-5',
        small_model: 'switchyard/claude-sonnet-4-5',
      });
    },
  }),
};

/** How a CLI runs headless, as `yard implement`'s process agent runs it: its task on stdin, its shell tool for the model. */
export interface HeadlessRun {
  /** Arguments after the command that run one task read from stdin and exit. */
  args: string[];
  /** The CLI's own shell tool the scripted model calls. */
  tool: string;
  /** That tool's arguments for running `command`. */
  call(command: string): Record<string, unknown>;
}

export const HEADLESS_RUNS: Partial<Record<AgentCliName, HeadlessRun>> = {
  // No sandbox: a worktree's commits are written to the main repository's .git, outside the workspace
  // Codex's workspace-write sandbox allows (`--add-dir <repo>/.git` would allow it where Landlock works).
  codex: {
    args: ['exec', '--sandbox', 'danger-full-access', '--color', 'never', '--ephemeral'],
    tool: 'exec_command',
    call: (cmd) => ({ cmd }),
  },
  claude: {
    args: ['-p', '--allowedTools', 'Bash', '--output-format', 'text'],
    tool: 'Bash',
    call: (command) => ({ command, description: 'Write the work and commit it' }),
  },
};
