/**
 * @module messageRules
 * Per-agent-kind rules that turn "what changed on the screen since the
 * user's last message" into the agent's message. A terminal shows more than
 * the reply: the echo of what was typed, the program's prompt, an input box,
 * spinners and status bars. Rules say how to find the change and what to
 * strip. They are plain objects, so an embedder can plug in rules of its own
 * (see docs/agent-session.md, "Message rules").
 *
 * Shipped kinds (the other agents' rules, built on these, are in agentRules.ts):
 * - `generic`: line-oriented programs (`python3 -i`, `bash`, `node`, most
 *   REPLs and CLIs). The change is read from the scrollback; the echo and
 *   the trailing prompt are stripped.
 * - `claude`: full-screen coding agents in the style of Claude Code (an
 *   input box at the bottom, a status line under it, `⏺` before replies,
 *   a spinner with "esc to interrupt"). The change is the new part of the
 *   screen; the box, everything under it, spinners, the `> …` echo and the
 *   reply bullets are stripped.
 */
import { type DetectedDialog, type DialogScreen, detectDialog } from './dialogs.js';
import { stripEcho, trimBlankLines } from './text.js';

/** What a rule gets to format. */
export interface ScreenChange {
  /** The screen text that is new since the user's last message (since the start before the first). */
  text: string;
  /** The user's last message (`''` before the first). */
  userInput: string;
  /** The prompt the program showed when the user's message was typed: the cursor line's text before the cursor, trimmed. */
  prompt: string;
  /** The cursor line's text before the cursor, trimmed, when nothing follows the cursor on that line (the program waits for input); else undefined. */
  cursorLine: string | undefined;
}

/**
 * How to extract an agent's messages from its screen.
 *
 * @example
 * ```ts
 * const shouting: MessageRules = {
 *   kind: 'shouting',
 *   description: 'a REPL whose replies we upper-case',
 *   extraction: 'scrollback',
 *   format: (change) => genericRules.format(change).toUpperCase(),
 * };
 * ```
 */
export interface MessageRules {
  /** The agent kind these rules are for (`--type`). */
  readonly kind: string;
  /** One line for humans (shown by `/status`'s consumers and the docs). */
  readonly description: string;
  /**
   * Where the change since the last user message is read:
   * - `scrollback`: from the line the cursor was on when the message was typed to the end of the
   *   buffer (programs that print line after line; nothing above the cursor is redrawn);
   * - `screen`: the lines of the whole buffer that are new compared with the buffer as it was
   *   before the message (programs that redraw the screen).
   */
  readonly extraction: 'scrollback' | 'screen';
  /** Quiet time after pasting before Enter is sent (programs that take a paste asynchronously need more). Default 100 ms. */
  readonly pasteSettleMs?: number;
  /** Turns the change into the message (`''` when there is nothing to say yet). */
  format(change: ScreenChange): string;
  /**
   * The choice or confirmation the agent shows, if any (default: {@link detectDialog}). While
   * one is shown, user messages are refused: typed text would answer the dialog instead.
   */
  dialog?(screen: DialogScreen): DetectedDialog | undefined;
  /**
   * True while the visible screen shows the agent's own busy indicator (a spinner, "esc to
   * interrupt"): the agent stays `running` however long the screen has been quiet.
   */
  busy?(screen: DialogScreen): boolean;
  /**
   * True while the visible screen shows the agent's input area. A full-screen agent without one
   * on screen (starting, or redrawing) stays `running`, however long its screen has been quiet
   * (up to the session's `readyTimeoutMs`). Optional.
   */
  ready?(screen: DialogScreen): boolean;
}

/** Prompts of common REPLs and shells: `>>>`, `...`, `In [3]:`, `user@host:~$`, `bash-5.2#`, `>`, `❯`. */
const PROMPT = /^(?:>>>|\.\.\.|In \[\d+\]:|[\w.@~:/()[\]-]*[$#%>❯›»])$/u;

/**
 * Removes the prompt the program printed after its output, when the cursor
 * waits right after it: either the prompt seen when the message was typed,
 * or anything shaped like a common prompt.
 */
export function stripTrailingPrompt(text: string, change: Pick<ScreenChange, 'prompt' | 'cursorLine'>): string {
  const lines = trimBlankLines(text).split('\n');
  const last = lines.at(-1) ?? '';
  if (change.cursorLine === undefined || last !== change.cursorLine || last === '') return lines.join('\n');
  if (change.prompt && last.endsWith(change.prompt)) lines[lines.length - 1] = last.slice(0, -change.prompt.length);
  else if (PROMPT.test(last.trim())) lines.pop();
  return trimBlankLines(lines.join('\n'));
}

/** Rules for line-oriented programs: REPLs, shells, chat CLIs. */
export const genericRules: MessageRules = {
  kind: 'generic',
  description: 'line-oriented programs (REPLs, shells): echo and trailing prompt stripped',
  extraction: 'scrollback',
  format(change) {
    const lines = trimBlankLines(stripEcho(change.text, change.userInput)).split('\n');
    // A bare continuation prompt right after the echo (`...` once a block is closed) is no output.
    while (lines.length > 1 && PROMPT.test(lines[0]!.trim())) lines.shift();
    return stripTrailingPrompt(lines.join('\n'), change);
  },
};

const BOX_TOP = /^\s*╭─{3,}.*╮\s*$/u;
const RULE = /^\s*─{10,}\s*$/u;
const INPUT_LINE = /^\s*(?:│\s*)?[>›❯]/u;
const SPINNER = /(?:esc|ctrl\+c) to interrupt|^\s*[✻✢✳✶✽✺✦·*]\s+\S+…/iu;
const REPLY_BULLET = /^(\s*)[⏺●] /gmu;

/** Index of the input box near the bottom (a box or a rule line with a `>` line under it), or -1. */
export function inputBoxStart(lines: readonly string[], searchLines = 12): number {
  for (let i = lines.length - 2; i >= Math.max(0, lines.length - searchLines); i--) {
    if ((BOX_TOP.test(lines[i]!) || RULE.test(lines[i]!)) && INPUT_LINE.test(lines[i + 1]!)) return i;
  }
  return -1;
}

/** Drops a leftover `> …` echo block at the top (a long paste the agent shows as a placeholder). */
function dropEchoBlock(text: string): string {
  const lines = trimBlankLines(text).split('\n');
  if (!/^>\s/u.test(lines[0] ?? '')) return lines.join('\n');
  const end = lines.findIndex((line) => line.trim() === '');
  return end < 0 ? '' : lines.slice(end).join('\n');
}

/** Rules for full-screen coding agents with an input box (Claude Code style). */
export const claudeRules: MessageRules = {
  kind: 'claude',
  description: 'full-screen coding agents with an input box (Claude Code style): box, status line, spinners, echo and bullets stripped',
  extraction: 'screen',
  pasteSettleMs: 300,
  format(change) {
    // Blank rows under the box (a screen taller than its content) must not hide the box from the search.
    let lines = trimBlankLines(change.text).split('\n');
    const box = inputBoxStart(lines);
    if (box >= 0) lines = lines.slice(0, box);
    lines = lines.filter((line) => !SPINNER.test(line));
    const text = dropEchoBlock(stripEcho(trimBlankLines(lines.join('\n')), change.userInput));
    return trimBlankLines(text.replace(REPLY_BULLET, '$1'));
  },
};

// The rules of every other agent type, and `rulesFor`, are in agentRules.ts.
