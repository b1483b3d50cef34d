/**
 * @module agentRules
 * Message rules for every major terminal agent, and the agent type a
 * command stands for. Each agent draws its own chrome around the
 * conversation: a banner, an input box, a status line under it, spinners
 * while it works. The rules here know, per agent, where the input box
 * starts, which lines are chrome, what its reply bullets look like and
 * which indicators say it is busy, so that `/messages` carries the
 * conversation only and `running` lasts as long as the agent says it works.
 *
 * The shapes come from the agents' screens at the versions named in
 * docs/agent-session.md; the recordings in agentRecordings.test.ts stand
 * for them.
 */
import type { DialogScreen } from './dialogs.js';
import { genericRules, inputBoxStart, type MessageRules, type ScreenChange, stripTrailingPrompt } from './messageRules.js';
import { stripEcho, trimBlankLines } from './text.js';

/** What distinguishes one agent's screen. */
export interface AgentScreenSpec {
  kind: string;
  description: string;
  /** `screen` for full-screen agents (the default), `scrollback` for line-oriented ones. */
  extraction?: 'screen' | 'scrollback';
  pasteSettleMs?: number;
  /** Where the input area starts (everything from there down is chrome), or -1. */
  inputBox(lines: readonly string[]): number;
  /** Lines that are chrome wherever they are: banners, status and token lines, tool headers. */
  chrome: readonly RegExp[];
  /** The agent's busy indicators: dropped from messages, and the agent is `running` while one is on screen. */
  busy: readonly RegExp[];
  /** Reply bullets to strip at the start of lines (`⏺ `, `✦ `, `● `). */
  bullet?: RegExp;
  /** Rows of echoed input left at the top (`> text`, `│ > text │`); `null` when replies may start that way. */
  echoRows?: RegExp | null;
  /** The prompt a line-oriented agent prints after its reply (scrollback extraction). */
  prompt?: RegExp;
}

/** The last box (╭…╮ or ┌…┐) that starts in the bottom `near` rows and closes in the bottom 8: the input box, or -1. */
export function bottomBoxStart(lines: readonly string[], near = 14): number {
  const last = lastFilled(lines);
  for (let close = last; close >= Math.max(0, last - 8); close--) {
    if (!/^\s*[╰└]/u.test(lines[close]!)) continue;
    for (let open = close - 1; open >= Math.max(0, last - near); open--) if (/^\s*[╭┌]/u.test(lines[open]!)) return open;
    return -1;
  }
  return -1;
}

function lastFilled(lines: readonly string[]): number {
  let last = lines.length - 1;
  while (last > 0 && lines[last]!.trim() === '') last--;
  return last;
}

/** The last row in the bottom `near` rows whose text starts with `marker`, or -1. */
function lastRowStarting(lines: readonly string[], marker: RegExp, near = 6): number {
  const last = lastFilled(lines);
  for (let i = last; i >= Math.max(0, last - near); i--) if (marker.test(lines[i]!)) return i;
  return -1;
}

/** Drops a block of echoed input at the top: `> text` or `│ > text │` rows, up to the first blank row. */
function dropEchoRows(text: string, echo: RegExp): string {
  const lines = trimBlankLines(text).split('\n');
  if (!echo.test(lines[0] ?? '')) return lines.join('\n');
  const end = lines.findIndex((line) => line.trim() === '');
  return end < 0 ? '' : lines.slice(end).join('\n');
}

/**
 * The text from the last row that starts the echo of `input` (its first characters after a
 * prompt marker, spaces ignored), or the whole text when no row does.
 */
export function fromLastEcho(text: string, input: string): string {
  const squeeze = (value: string) => value.replace(/\s+/gu, '');
  const start = squeeze(input.split('\n').find((line) => line.trim() !== '') ?? '').slice(0, 12);
  if (start.length < 4) return text;
  const rows = text.split('\n');
  // Only an echo row: the input right after the prompt marker or border, never a reply quoting it.
  const isEcho = (row: string) =>
    squeeze(row)
      .replace(/^[>›❯│┃▌|]+/u, '')
      .startsWith(start);
  for (let i = rows.length - 1; i > 0; i--) if (isEcho(rows[i]!)) return rows.slice(i).join('\n');
  return text;
}

/** Removes the indentation every non-blank line shares (full-screen agents indent their replies). */
export function dedent(text: string): string {
  const rows = text.split('\n');
  const indents = rows.filter((row) => row.trim() !== '').map((row) => /^ */u.exec(row)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return cut === 0 ? text : rows.map((row) => row.slice(Math.min(cut, /^ */u.exec(row)![0].length))).join('\n');
}

/**
 * Rules from an {@link AgentScreenSpec}.
 *
 * @example
 * ```ts
 * const mine = agentRules({ kind: 'mine', description: 'my agent', inputBox: bottomBoxStart, chrome: [], busy: [/working/] });
 * ```
 */
export function agentRules(spec: AgentScreenSpec): MessageRules {
  const isChrome = (line: string) => spec.chrome.some((re) => re.test(line)) || spec.busy.some((re) => re.test(line));
  return {
    kind: spec.kind,
    description: spec.description,
    extraction: spec.extraction ?? 'screen',
    pasteSettleMs: spec.pasteSettleMs ?? 300,
    format(change: ScreenChange) {
      let lines = change.text.split('\n');
      const box = spec.inputBox(lines);
      if (box >= 0) lines = lines.slice(0, box);
      lines = lines.filter((line) => !isChrome(line));
      let text = trimBlankLines(lines.join('\n'));
      // A full-screen agent may draw late start-up output above the echo: the reply is below it.
      if (spec.extraction !== 'scrollback') text = fromLastEcho(text, change.userInput);
      text = stripEcho(text, change.userInput);
      const echoRows = spec.echoRows === undefined ? /^\s*(?:[│┃┆|]\s*)?[>›❯]\s/u : spec.echoRows;
      if (echoRows) text = dropEchoRows(text, echoRows);
      if (spec.bullet) text = text.replace(spec.bullet, '$1');
      text = trimBlankLines(text.replace(/^\s*[╰└][─━]+[╯┘]\s*$/gmu, ''));
      if (spec.prompt) {
        const rows = text.split('\n');
        if (spec.prompt.test(rows.at(-1)?.trim() ?? '')) rows.pop();
        text = trimBlankLines(rows.join('\n'));
      }
      return dedent(spec.extraction === 'scrollback' ? stripTrailingPrompt(text, change) : text);
    },
    busy(screen: DialogScreen) {
      return screen.lines.some((line) => spec.busy.some((re) => re.test(line)));
    },
    // A full-screen agent is ready once its input area is drawn; a line-oriented one has none to find.
    ...(spec.extraction === 'scrollback' ? {} : { ready: (screen: DialogScreen) => spec.inputBox(screen.lines) >= 0 }),
  };
}

const SPINNER = /^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷◐◓◑◒]\s/u;
const ESC_TO_INTERRUPT = /\b(?:esc|ctrl\+?\s?c)\b[^)\n]{0,12}\b(?:to )?(?:interrupt|cancel)\b/iu;

/** Rows of a block-art logo (the text beside the art goes with it): Claude Code's, Gemini CLI's, Qwen Code's. */
const LOGO_ROW = /^\s*[▐▛█▜▝▘▀▌▗▖▄▙▟╔╗╚╝═║]{2,}/u;
/** A rule line (`────`) across the screen. */
const RULE_ROW = /^\s*─{10,}\s*$/u;

/** The last filled row at or above which an input area is looked for (blank rows under it ignored). */
const filled = (lines: readonly string[]) => lines.slice(0, lastFilled(lines) + 1);

/** Claude Code (2.1.332, seen live): `❯` input between two rules, a mode line under it, `●` replies, "… (esc to interrupt)" spinner. */
const claude = agentRules({
  kind: 'claude',
  description: 'Claude Code: `❯` input between two rules with a mode line under it, logo banner, `●` replies, "✻ … (esc to interrupt)"',
  inputBox: (lines) => inputBoxStart(filled(lines)),
  chrome: [
    LOGO_ROW,
    // Notices at the left margin or centred above the input ("⚠ … retires …"); a reply's own lines sit under its bullet.
    /^(?:\s{4,})?⚠ /u,
    // The line a finished turn leaves: "✻ Brewed for 1s · done 12:16 AM".
    /^\s*[✻✢✳✶✽✺·*]\s+\p{L}+ for <?(?:\d+[hms]\s*)+/u,
  ],
  busy: [ESC_TO_INTERRUPT, /^\s*[✻✢✳✶✽✺·*]\s+\S+…/u],
  bullet: /^(\s*)[⏺●] /gmu,
});

/** OpenAI Codex (0.171.0, seen live): `›` composer with footer lines, braille splash, `•` replies, "• Working (4s • esc to interrupt)". */
const codex = agentRules({
  kind: 'codex',
  description: 'OpenAI Codex CLI: `›` composer and footer, braille splash, `•` bullets, "Working (… esc to interrupt)"',
  inputBox: (lines) => {
    const at = lastRowStarting(lines, /^\s*▌?\s*›/u);
    return at >= 0 && at > 0 && lines[at - 1]!.trim() === '' ? at - 1 : at;
  },
  chrome: [
    /^\s*[│╭╰].*(?:OpenAI Codex|model:|directory:)/u,
    /^\s*>_ OpenAI Codex/u,
    // The working directory under the title, indented deeper than any reply line.
    /^\s{4,}[~/]\S*\s*$/u,
    /^\s*[\u2800-\u28FF][\s\u2800-\u28FF]*$/u,
    /^\s*To get started, describe a task/u,
    /^\s*(?:─+\s*)?Worked for [<\d]/u,
    /^\s*user$/u,
    /^\s*codex$/u,
  ],
  busy: [/^\s*▌?\s*[•◦]\s+Working \(/u, ESC_TO_INTERRUPT],
  bullet: /^(\s*)[•] /gmu,
});

/** Rows between Gemini CLI's reply area and its input box: the spinner and shortcut hint row, a rule, the mode hint. */
const GEMINI_ABOVE_INPUT = [/^\s*$/u, RULE_ROW, /\? for shortcuts\s*$/u, /^\s*(?:Shift\+Tab|shift \+ tab) to\b/u, /\(esc to cancel/iu];

/** Gemini CLI (0.61.0, seen live): the input between a `▄▄▄` and a `▀▀▀` row, hint rows above it, a footer under it. */
function geminiInputStart(lines: readonly string[]): number {
  const last = lastFilled(lines);
  let at = -1;
  for (let i = last; i >= Math.max(0, last - 8) && at < 0; i--) if (/^\s*▄{10,}\s*$/u.test(lines[i]!)) at = i;
  for (let steps = 0; at > 0 && steps < 5 && GEMINI_ABOVE_INPUT.some((re) => re.test(lines[at - 1]!)); steps++) at--;
  return at;
}

const GEMINI_TIPS = [/^\s*Tips for getting started/u, /^\d\. (?:Create \w+\.md|\/help|Ask (?:coding )?questions|Be specific)/u];

const gemini = agentRules({
  kind: 'gemini',
  description:
    'Gemini CLI: logo banner, input between `▄▄▄`/`▀▀▀` rows with hints above and a footer below, `✦` replies, "(esc to cancel, …)"',
  inputBox: geminiInputStart,
  chrome: [LOGO_ROW, /^\s*[▄▀]{10,}\s*$/u, ...GEMINI_TIPS, /^\s*Authenticated with /u, /^ℹ /u],
  busy: [/\(esc to cancel/iu, SPINNER],
  bullet: /^(\s*)✦ /gmu,
});

/** Qwen Code (0.24.4, seen live): a Gemini CLI fork whose input sits between two rules, with its model and mode under it. */
const qwen = agentRules({
  kind: 'qwen',
  description:
    'Qwen Code: logo and info box, `>` input between two rules with model and mode lines under it, `◆` replies, "(11s · esc to cancel)"',
  inputBox: (lines) => inputBoxStart(filled(lines)),
  chrome: [LOGO_ROW, /^\s*Tips: /u, /^\s*[●△]\uFE0E? (?:Update check|Extensions changed)/u],
  // "⠧ My other process is a TARDIS... (11s · esc to cancel)"
  busy: [ESC_TO_INTERRUPT, SPINNER],
  bullet: /^(\s*)[✦◆]\uFE0E? /gmu,
});

const opencode = agentRules({
  kind: 'opencode',
  description:
    'OpenCode: `┃` input area closed by `╹▀▀▀`, the hint and path line under it, logo home screen, "⬝⬝⬝ esc interrupt" while working',
  inputBox: (lines) => {
    const end = lastRowStarting(lines, /^\s*╹▀{5,}/u, 20);
    if (end < 0) return -1;
    let start = end;
    while (start > 0 && /^\s*┃/u.test(lines[start - 1]!)) start--;
    return start;
  },
  chrome: [
    /^\s*opencode v\d/u,
    // The block-letter logo of the home screen.
    /^\s*[▄▀█]+(?:\s+[▄▀█]+)*\s*$/u,
    // An empty row of the echoed message's box, and the agent and model line under a reply ("▣  Build · model · 11.0s").
    /^\s*┃\s*$/u,
    /^\s*▣\s+\S/u,
    /^\s*(?:Build|Plan)\s+\S+-\d{8}\s*$/u,
    /tab (?:switch agent|agents)|ctrl\+p commands/u,
  ],
  busy: [/\besc interrupt\b/iu, /^\s*[⬝■]{3,}/u],
  bullet: /^(\s*)┃ /gmu,
});

const aider = agentRules({
  kind: 'aider',
  description: 'aider: line-oriented; token and cost lines, the `───` rule and `>` prompt stripped; "Waiting for" spinner',
  extraction: 'scrollback',
  pasteSettleMs: 100,
  inputBox: (lines) => inputBoxStart(lines),
  chrome: [
    /^\s*Tokens: [\d.]+k? sent/u,
    /^\s*Aider v\d/u,
    /^\s*(?:Main model|Weak model|Git repo|Repo-map|Use \/help)\b/u,
    /^\s*─{10,}\s*$/u,
  ],
  busy: [/^\s*[░█▒▓]{2,}\s*Waiting for\b/u, /^\s*Waiting for \S+/u],
  prompt: /^(?:\w+\s*)?>$/u,
});

const goose = agentRules({
  kind: 'goose',
  description: 'Goose: line-oriented with a `( O)>` prompt; session banner and spinner stripped',
  extraction: 'scrollback',
  pasteSettleMs: 100,
  inputBox: () => -1,
  chrome: [/^\s*(?:starting session|logging to|working directory:|Goose is running!)/iu, /^\s*__\( O\)>/u, /^\s*\\____\)/u, /^\s*L L\s/u],
  busy: [SPINNER],
  prompt: /^\(\s?O\)>$/u,
});

const amp = agentRules({
  kind: 'amp',
  description: 'Amp: a tall box at the bottom (mode in its top border), `┃` echo, "✓ Thinking" lines, "esc to cancel"',
  inputBox: bottomBoxStart,
  chrome: [/^\s*[✓∿≈]\s+Thinking\b/u, /^\s*\d+% of \d+k\s*$/u, /^\s*Welcome to Amp\s*$/u],
  busy: [ESC_TO_INTERRUPT, /^\s*[∿≈]\s+(?:Thinking|Running)/u],
});

const copilot = agentRules({
  kind: 'copilot',
  description: 'GitHub Copilot CLI: boxed input with a footer, `●` replies and `○` tool lines, "(Esc to cancel)"',
  inputBox: bottomBoxStart,
  chrome: [/^\s*Ctrl\+c Exit\b/iu, /^\s*Welcome to GitHub Copilot CLI/u, /^\s*Version \d+\.\d+\.\d+/u, /^\s*[○✓✗] /u, /^\s*[$↪] /u],
  busy: [ESC_TO_INTERRUPT, /^\s*[◉◎∙]\s+(?:Thinking|Working)/u],
  bullet: /^(\s*)● /gmu,
});

const cursor = agentRules({
  kind: 'cursor',
  description: 'Cursor agent: `┌ → Add a follow-up ┘` input box, model and hint lines under it, "⬡ Thinking" / "Generating"',
  inputBox: bottomBoxStart,
  chrome: [/^\s*Cursor Agent\s*$/u, /^\s*\/ for commands · @ for files/u, /^\s*(?:Claude|GPT|OpenAI|Auto|Gemini)[\w .-]*$/u],
  busy: [/^\s*[⬡⬢]\s+(?:Thinking|Generating|Reading|Running)/u, /ctrl\+c to stop/iu],
});

const auggie = agentRules({
  kind: 'auggie',
  description: 'Augment Auggie: `│ ›` input box with a hint line under it, `●`/`»` replies, "(… esc to interrupt)"',
  inputBox: bottomBoxStart,
  chrome: [/^\s*Type \/ for commands/u, /^\s*Indexing/u],
  // Its footer always says "Esc/Ctrl+C to interrupt"; only the timed form means it works.
  busy: [/\(\s*\d+s\s*•\s*esc to interrupt\s*\)/iu, SPINNER],
  bullet: /^(\s*)[»●] /gmu,
});

const amazonq = agentRules({
  kind: 'amazonq',
  description: 'Amazon Q Developer CLI: line prompt `>`, "Thinking..." spinner, tool headers stripped',
  extraction: 'scrollback',
  pasteSettleMs: 200,
  inputBox: () => -1,
  chrome: [/^\s*🛠️\s+Using tool:/u, /^\s*⋮\s*$/u, /^\s*● (?:Running|Reading|Completed)\b/u, /^\s*● Completed in /u],
  busy: [/^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+Thinking/u],
  echoRows: null,
  bullet: /^(\s*)> (?=\S)/gmu,
  prompt: /^(?:\[[\w-]+\]\s*)?!?>$/u,
});

/** The shipped rules by agent type, with aliases. */
export const builtInMessageRules: Readonly<Record<string, MessageRules>> = {
  generic: genericRules,
  custom: genericRules,
  claude,
  'claude-code': claude,
  codex,
  gemini,
  qwen,
  opencode,
  aider,
  goose,
  amp,
  copilot,
  cursor,
  'cursor-agent': cursor,
  auggie,
  amazonq,
  q: amazonq,
};

/** The agent types `--type` accepts (aliases aside). */
export const AGENT_TYPES = [
  'claude',
  'codex',
  'gemini',
  'qwen',
  'opencode',
  'aider',
  'goose',
  'amp',
  'copilot',
  'cursor',
  'auggie',
  'amazonq',
  'custom',
  'generic',
] as const;

/**
 * The rules for an agent type: `custom` entries first, then the shipped
 * ones; an unknown or missing type gets the generic rules.
 *
 * @example
 * ```ts
 * rulesFor('codex').kind; // 'codex'
 * rulesFor('python').kind; // 'generic'
 * ```
 */
export function rulesFor(agentType: string | undefined, custom: Readonly<Record<string, MessageRules>> = {}): MessageRules {
  if (!agentType) return genericRules;
  const key = agentType.toLowerCase();
  if (Object.hasOwn(custom, key)) return custom[key]!;
  return Object.hasOwn(builtInMessageRules, key) ? builtInMessageRules[key]! : genericRules;
}

const COMMAND_TYPES: Readonly<Record<string, string>> = {
  claude: 'claude',
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  qwen: 'qwen',
  opencode: 'opencode',
  aider: 'aider',
  goose: 'goose',
  amp: 'amp',
  copilot: 'copilot',
  'cursor-agent': 'cursor',
  cursor: 'cursor',
  auggie: 'auggie',
  q: 'amazonq',
  qchat: 'amazonq',
  amazonq: 'amazonq',
};

/**
 * The agent type a command stands for, from its file name (`/usr/local/bin/codex` is `codex`,
 * `cursor-agent` is `cursor`, `q` is `amazonq`); `generic` for any other program.
 *
 * @example
 * ```ts
 * inferAgentType('/opt/node/bin/gemini'); // 'gemini'
 * inferAgentType('python3'); // 'generic'
 * ```
 */
export function inferAgentType(command: string): string {
  const base = (command.split(/[\\/]/u).at(-1) ?? '').toLowerCase().replace(/\.(?:js|mjs|cjs|cmd|exe|ps1|sh)$/u, '');
  return Object.hasOwn(COMMAND_TYPES, base) ? COMMAND_TYPES[base]! : 'generic';
}
