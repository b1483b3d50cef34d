/**
 * @module screenReading
 * What an agent kind's {@link MessageRules} read off its terminal screen: the
 * dialog it shows, its busy indicator, its input area, and the change since
 * the user's last message that becomes the agent's message. Rules are code
 * (and custom rules come from the user): one that throws is read as showing
 * nothing, so a broken rule cannot stop the session.
 */
import type { IMarker } from '@xterm/headless';
import { type DetectedDialog, detectDialog } from '../rules/dialogs.js';
import type { MessageRules, ScreenChange } from '../rules/messageRules.js';
import { newSection } from '../rules/text.js';
import type { HeadlessScreen } from './headlessScreen.js';

/** Where a user message was typed: what the agent's reply is measured from. */
export interface Turn {
  /** Where the cursor was when the message was typed (scrollback extraction). */
  mark: IMarker | undefined;
  /** The buffer before the message (screen extraction). */
  before: string[];
  /** The prompt the program showed. */
  prompt: string;
}

/** Marks the screen as it is before a message is typed (disposing the previous turn's marker). */
export function startTurn(screen: HeadlessScreen, previous: Turn | undefined): Turn {
  previous?.mark?.dispose();
  return { mark: screen.mark(), before: screen.lines(), prompt: screen.cursorLine() ?? '' };
}

/** The dialog on the visible screen, per the rules (the shared detector if they have none). */
export function dialogOnScreen(rules: MessageRules, screen: HeadlessScreen): DetectedDialog | undefined {
  try {
    const lines = screen.snapshot().lines;
    return rules.dialog ? rules.dialog({ lines }) : detectDialog({ lines });
  } catch {
    return undefined;
  }
}

/** The agent's own busy indicator (spinner, "esc to interrupt") is on the visible screen. */
export function busyIndicatorOnScreen(rules: MessageRules, screen: HeadlessScreen): boolean {
  if (!rules.busy) return false;
  try {
    return rules.busy({ lines: screen.snapshot().lines });
  } catch {
    return false;
  }
}

/**
 * The agent's input area (or a dialog) is on the visible screen; undefined for rules that cannot
 * tell (agents that are not full-screen). A rule that throws counts as showing it.
 */
export function inputAreaOnScreen(rules: MessageRules, screen: HeadlessScreen): boolean | undefined {
  if (!rules.ready) return undefined;
  try {
    return rules.ready({ lines: screen.snapshot().lines }) || dialogOnScreen(rules, screen) !== undefined;
  } catch {
    return true;
  }
}

/** What changed on the screen since `turn` (or the start), for the rules to format as the agent's message. */
export function changeSince(rules: MessageRules, screen: HeadlessScreen, turn: Turn | undefined, userInput: string): ScreenChange {
  let lines: string[];
  if (rules.extraction === 'scrollback' && !screen.alternate) {
    const from = turn?.mark && !turn.mark.isDisposed && turn.mark.line >= 0 ? turn.mark.line : 0;
    lines = screen.lines(from);
  } else {
    lines = newSection(turn?.before ?? [], screen.lines());
  }
  return {
    text: lines.join('\n'),
    // Before this session's first message there is no echo to strip, whatever history was restored.
    userInput: turn ? userInput : '',
    prompt: turn?.prompt ?? '',
    cursorLine: screen.cursorLine(),
  };
}
