/**
 * @module dialogAnswer
 * Typing the answer to a dialog on a terminal, and making sure it was taken.
 * A dialog on screen does not mean the program reads keys for it yet:
 * Claude Code 2.1 refuses keys for 150 ms after it draws a dialog (a guard
 * against keys typed before the user saw it; a refused key restarts it), and
 * when the guard ends it remounts the menu, which puts the selection back on
 * its default. A loaded machine stretches both. Keys sent too early are lost,
 * or an arrow is taken and then undone, and Enter confirms the default.
 *
 * So a menu is answered the way a careful person answers it, with the screen
 * as the only witness: wait until the dialog has held still, move the
 * selection one arrow at a time (each read back from the screen), confirm only
 * once the selection has held still on the chosen option, and press Enter
 * again only if the screen showed no change at all (the key was refused).
 * Every wait is bounded; a dialog that never takes the answer is an error,
 * never a silent success.
 */
import type { Scheduler, TimerHandle } from '@switchyard/runtime';
import { AgentSessionError } from '../errors.js';
import { ARROW_DOWN, ARROW_UP, type DetectedDialog, dialogKeys } from '../rules/dialogs.js';

/** What typing into a program needs of the session: the keyboard, the screen and time. */
export interface WatchedTerminal {
  readonly scheduler: Scheduler;
  /** Sends keys to the program. */
  write(data: string): void;
  /** The dialog on the visible screen now, per the agent's rules. */
  dialog(): DetectedDialog | undefined;
  /** Changes whenever anything visible changes. */
  fingerprint(): string;
  /** Calls `listener` after each piece of output is on the screen (and when the program exits); returns the unsubscribe. */
  onOutput(listener: () => void): () => void;
  /** When output last reached the screen (scheduler time). */
  lastOutputAt(): number;
}

/** Timings of {@link answerDialogOnTerminal}. */
export interface DialogTimings {
  /** How long the screen must hold still before the first key, and on the chosen option before Enter (default 500 ms). */
  settleMs?: number;
  /** Longest time the whole answer may take before it is given up as not taken (default 20 s). */
  timeoutMs?: number;
  /** How long Enter may go without any visible change before it counts as refused (default 2000 ms). */
  confirmMs?: number;
}

/** Enter presses at most: one, and a retry for each refusal the screen showed. */
const MAX_CONFIRMS = 3;
/** Longest wait for stillness, as a multiple of the settle time: a screen that never stops (a clock, an animation) is answered anyway. */
const STILLNESS_CAP = 4;
/** A key's echo is read once the screen has been quiet this long after it. */
const KEY_QUIET_MS = 30;
/** Longest wait for a key's echo (a menu that took an arrow redraws within it). */
const KEY_ECHO_MS = 1000;

/**
 * Resolves once output reached the screen and then `quietMs` passed without more, or after
 * `timeoutMs`; to true if there was output.
 */
export function waitForOutput(terminal: WatchedTerminal, quietMs: number, timeoutMs: number): Promise<boolean> {
  const { scheduler } = terminal;
  return new Promise((resolve) => {
    let quietTimer: TimerHandle | undefined;
    let seen = false;
    const finish = () => {
      stop();
      if (quietTimer !== undefined) scheduler.clearTimeout(quietTimer);
      scheduler.clearTimeout(deadline);
      resolve(seen);
    };
    const stop = terminal.onOutput(() => {
      seen = true;
      if (quietTimer !== undefined) scheduler.clearTimeout(quietTimer);
      quietTimer = scheduler.setTimeout(finish, quietMs);
    });
    const deadline = scheduler.setTimeout(finish, timeoutMs);
  });
}

/** Resolves once no output has reached the screen for `quietMs` (perhaps already), or after `timeoutMs`. */
async function waitForStillness(terminal: WatchedTerminal, quietMs: number, timeoutMs: number): Promise<void> {
  const { scheduler } = terminal;
  const deadline = scheduler.now() + timeoutMs;
  for (;;) {
    const quietAt = terminal.lastOutputAt() + quietMs;
    const now = scheduler.now();
    if (now >= quietAt || now >= deadline) return;
    await new Promise<void>((resolve) => scheduler.setTimeout(resolve, Math.min(quietAt, deadline) - now));
  }
}

/** Resolves to true once the visible screen differs from `before` and output has paused, false after `timeoutMs` without a visible change. */
async function waitForVisibleChange(terminal: WatchedTerminal, before: string, timeoutMs: number): Promise<boolean> {
  const deadline = terminal.scheduler.now() + timeoutMs;
  for (;;) {
    if (terminal.fingerprint() !== before) {
      await waitForStillness(terminal, KEY_QUIET_MS, Math.max(0, deadline - terminal.scheduler.now()));
      return true;
    }
    const left = deadline - terminal.scheduler.now();
    if (left <= 0) return false;
    await waitForOutput(terminal, 0, left);
  }
}

function sameDialog(a: DetectedDialog, b: DetectedDialog): boolean {
  return a.kind === b.kind && a.text === b.text && a.options.length === b.options.length && a.options.every((o, i) => o === b.options[i]);
}

/**
 * Types the answer `option` (1-based, already checked) to `dialog`, the dialog on screen now, and
 * resolves once the program has taken it. Throws `busy` if it has not within the timeout.
 *
 * @example
 * ```ts
 * await answerDialogOnTerminal(terminal, terminal.dialog()!, 2, { settleMs: 500 });
 * ```
 */
export async function answerDialogOnTerminal(
  terminal: WatchedTerminal,
  dialog: DetectedDialog,
  option: number,
  timings: DialogTimings = {},
): Promise<void> {
  if (dialog.kind === 'letters') {
    // A letter prompt reads a line: nothing is refused or undone, the letter and Enter go in once.
    for (const key of dialogKeys(dialog, option)) {
      const shown = waitForOutput(terminal, KEY_QUIET_MS, 500);
      terminal.write(key);
      await shown;
    }
    return;
  }
  const { scheduler } = terminal;
  const settleMs = timings.settleMs ?? 500;
  const confirmMs = timings.confirmMs ?? 2000;
  const deadline = scheduler.now() + (timings.timeoutMs ?? 20_000);
  const left = () => Math.max(0, deadline - scheduler.now());
  const target = option - 1;
  let confirms = 0;
  // A menu just drawn may not read keys yet: it is answered once it has held still.
  const stillnessCapMs = settleMs * STILLNESS_CAP;
  await waitForStillness(terminal, settleMs, Math.min(stillnessCapMs, left()));
  while (left() > 0) {
    const shown = terminal.dialog();
    // Gone, or another screen in its place: the answer was taken.
    if (!shown || !sameDialog(shown, dialog)) return;
    if (shown.selected < 0) {
      // The menu shows no selection to read back: Enter confirms what the keys chose, once.
      for (const key of dialogKeys(shown, option)) {
        const echoed = waitForOutput(terminal, KEY_QUIET_MS, 500);
        terminal.write(key);
        await echoed;
      }
      return;
    }
    if (shown.selected !== target) {
      // One arrow per write, each once the screen has taken the previous one: menus built on
      // terminal UI toolkits read a burst of keys as one unknown key.
      const echoed = waitForOutput(terminal, KEY_QUIET_MS, Math.min(KEY_ECHO_MS, left()));
      terminal.write(shown.selected < target ? ARROW_DOWN : ARROW_UP);
      await echoed;
      continue;
    }
    // On the chosen option: confirm once it has held still there (a menu that undoes a move does so visibly).
    await waitForStillness(terminal, settleMs, Math.min(stillnessCapMs, left()));
    if (terminal.dialog()?.selected !== target) continue;
    if (confirms === MAX_CONFIRMS) break;
    const before = terminal.fingerprint();
    terminal.write('\r');
    confirms++;
    // Enter with no visible effect at all was refused: it is pressed again after the settle.
    if (!(await waitForVisibleChange(terminal, before, Math.min(confirmMs, left())))) continue;
    const after = terminal.dialog();
    // The selection undone (a refused Enter remounts Claude Code's menu) is moved back; anything else
    // means Enter was taken, and a second one would go to whatever the program shows next.
    if (after && sameDialog(after, dialog) && after.selected >= 0 && after.selected !== target) continue;
    return;
  }
  throw new AgentSessionError(
    'busy',
    `the agent did not take the answer (option ${option}) after ${confirms} Enter press(es); look at GET /screen and answer again, or send keys as a raw message`,
  );
}
