/**
 * @module headlessScreen
 * A terminal screen kept in memory by @xterm/headless: the program's output
 * is parsed exactly as a terminal would (cursor moves, redraws, the
 * alternate screen, soft wraps), and the engine reads plain text back. The
 * module is loaded on first use, so importing the engine costs nothing when
 * only the ACP transport is used.
 */
import type { IBufferLine, IMarker, Terminal } from '@xterm/headless';
import { AgentSessionError } from '../errors.js';

/** Size and history of the virtual terminal. */
export interface ScreenSize {
  /** Columns (default 120). */
  cols?: number;
  /** Rows (default 40). */
  rows?: number;
  /** Lines kept above the screen (default 5000). */
  scrollback?: number;
}

/** What the screen shows right now. */
export interface ScreenSnapshot {
  /** The visible rows, trailing spaces trimmed. */
  lines: string[];
  cols: number;
  rows: number;
  cursor: { row: number; col: number };
  /** True while the program uses the alternate screen (full-screen programs). */
  alternate: boolean;
}

let terminalModule: Promise<typeof import('@xterm/headless')> | undefined;

async function loadTerminal(): Promise<typeof Terminal> {
  terminalModule ??= import('@xterm/headless');
  try {
    const loaded = (await terminalModule) as typeof import('@xterm/headless') & { default?: typeof import('@xterm/headless') };
    return (loaded.Terminal ?? loaded.default?.Terminal) as typeof Terminal;
  } catch (error) {
    terminalModule = undefined;
    throw new AgentSessionError(
      'missing_dependency',
      'the pty transport needs @xterm/headless: install it next to @switchyard/agent-session',
      {
        cause: error,
      },
    );
  }
}

/**
 * A headless terminal screen.
 *
 * @example
 * ```ts
 * const screen = await HeadlessScreen.create({ cols: 80, rows: 24 });
 * await screen.write('hello\r\nworld');
 * screen.lines(); // ['hello', 'world', '', …]
 * ```
 */
export class HeadlessScreen {
  private constructor(private readonly term: Terminal) {}

  static async create(size: ScreenSize = {}): Promise<HeadlessScreen> {
    const TerminalClass = await loadTerminal();
    return new HeadlessScreen(
      new TerminalClass({ cols: size.cols ?? 120, rows: size.rows ?? 40, scrollback: size.scrollback ?? 5000, allowProposedApi: true }),
    );
  }

  get cols(): number {
    return this.term.cols;
  }

  get rows(): number {
    return this.term.rows;
  }

  /** Parses program output; resolves once it is on the screen. */
  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve) => this.term.write(data, resolve));
  }

  /** Calls `listener` after output has been parsed onto the screen. */
  onChange(listener: () => void): () => void {
    const disposable = this.term.onWriteParsed(listener);
    return () => disposable.dispose();
  }

  /** Answers the terminal owes the program (cursor position reports, device attributes): write them to the program. */
  onReply(listener: (data: string) => void): () => void {
    const disposable = this.term.onData(listener);
    return () => disposable.dispose();
  }

  /** True when the program asked for bracketed paste (DECSET 2004). */
  get bracketedPaste(): boolean {
    return this.term.modes.bracketedPasteMode;
  }

  get alternate(): boolean {
    return this.term.buffer.active.type === 'alternate';
  }

  /** A marker on the cursor's line that follows it as the buffer scrolls (undefined on the alternate screen). */
  mark(): IMarker | undefined {
    return this.alternate ? undefined : this.term.registerMarker(0);
  }

  /**
   * The active buffer from row `from` (scrollback included) as logical
   * lines: rows the terminal soft-wrapped are joined back together.
   */
  lines(from = 0): string[] {
    const buffer = this.term.buffer.active;
    const out: string[] = [];
    let pending: string | undefined;
    for (let row = Math.max(0, from); row < buffer.length; row++) {
      const line = buffer.getLine(row);
      if (!line) continue;
      const text = joinableText(line, buffer.getLine(row + 1)?.isWrapped === true);
      if (line.isWrapped && pending !== undefined) pending += text;
      else {
        if (pending !== undefined) out.push(pending);
        pending = text;
      }
    }
    if (pending !== undefined) out.push(pending);
    return out;
  }

  /** The visible rows. */
  viewport(): string[] {
    const buffer = this.term.buffer.active;
    const out: string[] = [];
    for (let row = buffer.viewportY; row < buffer.viewportY + this.term.rows; row++) out.push(rowText(buffer.getLine(row)));
    return out;
  }

  /** Changes whenever anything visible changes (including scrolling identical lines). */
  fingerprint(): string {
    const buffer = this.term.buffer.active;
    return `${buffer.type}:${buffer.baseY}:${buffer.cursorX},${buffer.cursorY}\n${this.viewport().join('\n')}`;
  }

  /**
   * The cursor line's text before the cursor (soft-wrapped rows joined),
   * trimmed, if nothing follows the cursor on that line; else undefined.
   */
  cursorLine(): string | undefined {
    const buffer = this.term.buffer.active;
    let row = buffer.baseY + buffer.cursorY;
    const line = buffer.getLine(row);
    if (!line) return undefined;
    if (line.translateToString(true, buffer.cursorX).trim() !== '') return undefined;
    let text = line.translateToString(false, 0, buffer.cursorX);
    let current: IBufferLine | undefined = line;
    while (current?.isWrapped && row > 0) {
      row--;
      current = buffer.getLine(row);
      text = (current ? joinableText(current, true) : '') + text;
    }
    return text.trim();
  }

  snapshot(): ScreenSnapshot {
    const buffer = this.term.buffer.active;
    return {
      lines: this.viewport(),
      cols: this.term.cols,
      rows: this.term.rows,
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      alternate: this.alternate,
    };
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
  }

  dispose(): void {
    this.term.dispose();
  }
}

/**
 * A row's text for joining soft-wrapped rows back into a line. A row that continues on the next one
 * keeps the spaces the program wrote at its end (they are part of the text) but not the cells it never
 * wrote: a wide character that did not fit in the last column went to the next row and left an empty
 * cell behind, which is no space in the program's output.
 */
function joinableText(line: IBufferLine, continues: boolean): string {
  if (!continues) return line.translateToString(true);
  let end = line.length;
  // An unwritten cell has no characters and width 1; the right half of a wide character has width 0.
  while (end > 0 && line.getCell(end - 1)?.getChars() === '' && line.getCell(end - 1)?.getWidth() === 1) end--;
  return line.translateToString(false, 0, end);
}

function rowText(line: IBufferLine | undefined): string {
  return line ? line.translateToString(true) : '';
}
