// Answering a dialog on a fake clock, against a menu that guards itself the way Claude Code
// 2.1.332's trust prompt does (read from its bundle): Enter within the hold after the menu is drawn
// is refused and restarts the hold, and when a hold ends the menu is remounted, which puts the
// selection back on its default. An arrow taken during the hold is undone that way. A loaded
// machine stretches the hold, so the hold here is longer than the session's settle time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import type { AgentExit } from '../conversation.js';
import type { AgentSessionError } from '../errors.js';
import type { DialogTimings } from './dialogAnswer.js';
import { HeadlessScreen } from './headlessScreen.js';
import { PtyAgentSession } from './ptySession.js';
import type { TerminalProgram } from './terminalProgram.js';

const OPTIONS = ['No, exit', 'Yes, I trust this folder'];

interface GuardedMenu extends TerminalProgram {
  /** The option Enter confirmed, once one was. */
  confirmed: string | undefined;
  /** Enter presses the menu received (refused ones included). */
  enters: number;
  /** Resolves once everything the menu printed is on the screen. */
  idle(): Promise<void>;
}

interface MenuBehaviour {
  /** How long after drawing (or after a refused Enter) keys are held (ms). */
  holdMs: number;
  /** Enter presses refused whatever the time (a menu that never takes the answer: Infinity). */
  refuseEnters?: number;
}

async function guardedMenu(clock: FakeScheduler, behaviour: MenuBehaviour): Promise<GuardedMenu> {
  const screen = await HeadlessScreen.create({ cols: 60, rows: 12 });
  const listeners: ((exit: AgentExit) => void)[] = [];
  let printing = Promise.resolve();
  const print = (text: string) => {
    printing = printing.then(() => screen.write(text));
  };
  let selected = 0;
  let heldUntil = clock.now() + behaviour.holdMs;
  let refusalsLeft = behaviour.refuseEnters ?? 0;
  const draw = () =>
    print(
      `\x1b[2J\x1b[HDo you trust the files in this folder?\r\n\r\n${OPTIONS.map((o, i) => `${i === selected ? '❯' : ' '} ${o}`).join('\r\n')}\r\n\r\nEnter to confirm · Esc to cancel`,
    );
  // When a hold ends the menu is mounted afresh: its selection is the default again.
  const remountWhenHeldEnds = () =>
    clock.setTimeout(() => {
      if (clock.now() < heldUntil || menu.confirmed !== undefined) return;
      if (selected !== 0) {
        selected = 0;
        draw();
      }
    }, heldUntil - clock.now());
  const menu: GuardedMenu = {
    screen,
    pid: undefined,
    confirmed: undefined,
    enters: 0,
    idle: () => printing,
    write(data) {
      if (menu.confirmed !== undefined) return;
      if (data === '\x1b[B' || data === '\x1b[A') {
        selected = Math.max(0, Math.min(OPTIONS.length - 1, selected + (data === '\x1b[B' ? 1 : -1)));
        draw();
      } else if (data === '\r') {
        menu.enters++;
        if (clock.now() < heldUntil || refusalsLeft-- > 0) {
          heldUntil = clock.now() + behaviour.holdMs;
          if (selected !== 0) {
            selected = 0;
            draw();
          }
          remountWhenHeldEnds();
          return;
        }
        menu.confirmed = OPTIONS[selected];
        print(`\x1b[2J\x1b[H${selected === 1 ? 'Trusted.\r\n> ' : 'Exited.'}`);
      }
    },
    onExit: (listener) => listeners.push(listener),
    kill: () => {
      for (const listener of listeners.splice(0)) listener({ exitCode: null, signal: 'SIGTERM' });
    },
    resize: (cols, rows) => screen.resize(cols, rows),
  };
  draw();
  remountWhenHeldEnds();
  await menu.idle();
  return menu;
}

/** Moves the fake clock in small steps, letting the menu's output reach the screen, until `work` settles. */
async function drive<T>(clock: FakeScheduler, menu: GuardedMenu, work: Promise<T>, limitMs = 60_000): Promise<T> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let elapsed = 0; !settled && elapsed < limitMs; elapsed += 10) {
    await clock.advance(10);
    await menu.idle();
  }
  return work;
}

async function answering(behaviour: MenuBehaviour, dialogTimings: DialogTimings = {}) {
  const clock = new FakeScheduler(Date.parse('2026-01-01T00:00:00Z'));
  const menu = await guardedMenu(clock, behaviour);
  const session = await PtyAgentSession.start({
    program: menu,
    scheduler: clock,
    stableWindowMs: 2000,
    snapshotDelayMs: 50,
    dialogTimings,
  });
  return { clock, menu, session };
}

describe('answering a menu that guards itself against early keys', () => {
  test('an arrow the menu undoes when its hold ends is sent again, and Enter waits until the selection has held still', async () => {
    // The hold (800 ms) outlasts the settle (500 ms): the first arrow is taken, then undone.
    const { clock, menu, session } = await answering({ holdMs: 800 });
    await drive(clock, menu, session.answerDialog(2));
    assert.equal(menu.confirmed, 'Yes, I trust this folder');
    assert.equal(menu.enters, 1, 'Enter went in once, on the chosen option');
    await session.close();
  });

  test('a refused Enter that puts the selection back is followed by the arrow again, then Enter', async () => {
    const { clock, menu, session } = await answering({ holdMs: 150, refuseEnters: 1 });
    await drive(clock, menu, session.answerDialog(2));
    assert.equal(menu.confirmed, 'Yes, I trust this folder');
    assert.equal(menu.enters, 2);
    await session.close();
  });

  test('a refused Enter with no visible effect is pressed again once confirmMs has passed', async () => {
    const { clock, menu, session } = await answering({ holdMs: 150, refuseEnters: 1 }, { confirmMs: 1000 });
    await drive(clock, menu, session.answerDialog(1));
    assert.equal(menu.confirmed, 'No, exit');
    assert.equal(menu.enters, 2);
    await session.close();
  });

  test('a menu that never takes the answer is an error (busy) after the timeout, with at most three Enter presses', async () => {
    const { clock, menu, session } = await answering({ holdMs: 150, refuseEnters: Number.POSITIVE_INFINITY }, { timeoutMs: 20_000 });
    const started = clock.now();
    await assert.rejects(drive(clock, menu, session.answerDialog(2)), (error: AgentSessionError) => {
      assert.equal(error.code, 'busy');
      assert.match(error.message, /did not take the answer/);
      return true;
    });
    assert.equal(menu.confirmed, undefined);
    assert.equal(menu.enters, 3);
    assert.ok(clock.now() - started <= 20_100, `gave up within the timeout (${clock.now() - started} ms)`);
    assert.ok(session.dialog(), 'the dialog is still reported');
    await session.close();
  });

  test('the first key waits until the menu has held still for settleMs', async () => {
    const { clock, menu, session } = await answering({ holdMs: 0 }, { settleMs: 500 });
    const keys: number[] = [];
    const write = menu.write.bind(menu);
    menu.write = (data) => {
      keys.push(clock.now());
      write(data);
    };
    const drawnAt = clock.now();
    await drive(clock, menu, session.answerDialog(2));
    assert.ok(keys[0]! - drawnAt >= 500, `first key ${keys[0]! - drawnAt} ms after the menu was drawn`);
    assert.equal(menu.confirmed, 'Yes, I trust this folder');
    await session.close();
  });
});
