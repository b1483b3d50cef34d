/**
 * How each coding-agent CLI is run headless against the gateway: the
 * settings that point it at 127.0.0.1 (the recipes of
 * docs/coding-agents.md), the model names it sends (aliased by the
 * gateway), the tool of its own the scripted model asks it to run, and
 * every update check and telemetry switch turned off. HOME and the XDG
 * directories are a temp dir; anything else goes to a proxy that refuses it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentCliName } from '@switchyard/test-support';
import { GATEWAY_KEY } from './agentGateway.js';
import type { Json } from './scriptedUpstream.js';

/** Where one run happens. */
export interface RunContext {
  gatewayUrl: string;
  /** A proxy on loopback that refuses everything (refusingProxy.ts). */
  proxyUrl: string;
  home: string;
  workdir: string;
}

/** What to run: the CLI's arguments and its environment (the whole of it: nothing is inherited). */
export interface Launch {
  args: string[];
  env: NodeJS.ProcessEnv;
}

export interface AgentClient {
  cli: AgentCliName;
  label: string;
  /** The API family it speaks to the gateway. */
  ingress: string;
  /** The model names it sends, which the gateway aliases to the upstream's model. */
  models: string[];
  /** The tool of its own the scripted model calls, and the arguments (they write proof.txt and print it). */
  tool: string;
  args: Json;
  launch(context: RunContext, prompt: string): Promise<Launch>;
}

/** What each CLI writes into proof.txt. */
export const proofText = (cli: AgentCliName) => `${cli}-was-here`;
const shell = (cli: AgentCliName) => `echo ${proofText(cli)} > proof.txt && cat proof.txt`;

/** The environment every CLI gets: a temp HOME and XDG dirs, the refusing proxy, a bare PATH. */
function baseEnv({ home, proxyUrl }: RunContext): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    TERM: 'dumb',
    NO_COLOR: '1',
    // Anything that is not loopback goes to the refusing proxy.
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    ALL_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

/** Codex's `config.toml` (a `model_providers` entry: OPENAI_BASE_URL alone does not bring Codex to the gateway) and `codex exec`. */
export async function launchCodex(
  context: RunContext,
  prompt: string,
  { model = 'gpt-5-codex', websockets = false } = {},
): Promise<Launch> {
  await writeFile(
    join(context.home, 'config.toml'),
    `model = "${model}"
model_provider = "switchyard"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.switchyard]
name = "Switchyard"
base_url = "${context.gatewayUrl}/v1"
env_key = "SWITCHYARD_API_KEY"
wire_api = "responses"
supports_websockets = ${websockets}
request_max_retries = 0
stream_max_retries = 0
`,
  );
  return {
    args: ['exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', '--color', 'never', prompt],
    env: { ...baseEnv(context), CODEX_HOME: context.home, SWITCHYARD_API_KEY: GATEWAY_KEY },
  };
}

const codex: AgentClient = {
  cli: 'codex',
  label: 'Codex',
  ingress: 'OpenAI Responses (HTTPS)',
  models: ['gpt-5-codex'],
  tool: 'exec_command',
  args: { cmd: shell('codex') },
  launch: (context, prompt) => launchCodex(context, prompt),
};

const claude: AgentClient = {
  cli: 'claude',
  label: 'Claude Code',
  ingress: 'Anthropic Messages',
  models: ['claude-sonnet-4-5', 'claude-haiku-4-5'],
  tool: 'Bash',
  args: { command: shell('claude'), description: 'Write proof.txt' },
  async launch(context, prompt) {
    return {
      args: ['-p', '--allowedTools', 'Bash', '--output-format', 'text', prompt],
      env: {
        ...baseEnv(context),
        ANTHROPIC_BASE_URL: context.gatewayUrl,
        ANTHROPIC_AUTH_TOKEN: GATEWAY_KEY,
        ANTHROPIC_MODEL: 'claude-sonnet-4-5',
        ANTHROPIC_SMALL_FAST_MODEL: 'claude-haiku-4-5',
        ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-haiku-4-5',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
    };
  },
};

/** Gemini CLI's and Qwen Code's settings.json (Qwen Code is a fork of Gemini CLI): no telemetry, no update check. */
async function geminiStyleSettings(dir: string, authType: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const settings = {
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    security: { auth: { selectedType: authType } },
  };
  await writeFile(join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
}

const gemini: AgentClient = {
  cli: 'gemini',
  label: 'Gemini CLI',
  ingress: 'Gemini',
  models: ['gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.5-pro'],
  tool: 'run_shell_command',
  args: { command: shell('gemini') },
  async launch(context, prompt) {
    await geminiStyleSettings(join(context.home, '.gemini'), 'gemini-api-key');
    return {
      args: ['-m', 'gemini-2.5-flash', '--yolo', '-p', prompt],
      env: {
        ...baseEnv(context),
        GOOGLE_GEMINI_BASE_URL: context.gatewayUrl,
        GEMINI_API_KEY: GATEWAY_KEY,
        // Headless runs refuse an untrusted folder; the temp workdir is ours.
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        // It relaunches itself only for a larger heap: one process starts faster.
        GEMINI_CLI_NO_RELAUNCH: 'true',
      },
    };
  },
};

const qwen: AgentClient = {
  cli: 'qwen',
  label: 'Qwen Code',
  ingress: 'OpenAI chat completions',
  models: ['qwen3-coder-plus'],
  tool: 'run_shell_command',
  args: { command: shell('qwen'), is_background: false },
  async launch(context, prompt) {
    await geminiStyleSettings(join(context.home, '.qwen'), 'openai');
    return {
      args: ['--yolo', '-p', prompt],
      env: {
        ...baseEnv(context),
        OPENAI_BASE_URL: `${context.gatewayUrl}/v1`,
        OPENAI_API_KEY: GATEWAY_KEY,
        OPENAI_MODEL: 'qwen3-coder-plus',
        QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
      },
    };
  },
};

const opencode: AgentClient = {
  cli: 'opencode',
  label: 'OpenCode',
  ingress: 'OpenAI chat completions (`@ai-sdk/openai-compatible`)',
  models: ['claude-sonnet-4-5'],
  tool: 'bash',
  args: { command: shell('opencode'), description: 'Write proof.txt' },
  async launch(context, prompt) {
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      permission: { bash: 'allow', edit: 'allow' },
      provider: {
        switchyard: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Switchyard',
          options: { baseURL: `${context.gatewayUrl}/v1`, apiKey: '{env:SWITCHYARD_API_KEY}' },
          models: { 'claude-sonnet-4-5': { name: 'Claude Sonnet 4.5 (through Switchyard)' } },
        },
      },
      model: 'switchyard/claude-sonnet-4-5',
      small_model: 'switchyard/claude-sonnet-4-5',
    };
    const path = join(context.home, 'opencode.json');
    await writeFile(path, JSON.stringify(config, null, 2));
    return {
      args: ['run', prompt],
      env: {
        ...baseEnv(context),
        OPENCODE_CONFIG: path,
        SWITCHYARD_API_KEY: GATEWAY_KEY,
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      },
    };
  },
};

/** The five clients of the matrix, by command name. */
export const AGENT_CLIENTS: Record<AgentCliName, AgentClient> = { claude, codex, gemini, qwen, opencode };
