/**
 * @module dialogs
 * Finding the choice or confirmation a terminal agent shows (a trust
 * prompt, an API-key prompt, a tool-permission prompt) on its screen, and
 * the keys that pick one of its options. While a dialog is up, typed text
 * goes into the dialog, not to the agent: the session refuses user messages
 * then, so none is swallowed.
 *
 * Three shapes are recognised, the ones terminal agents draw:
 * - menus: numbered options, one marked as selected (`❯ 1. Yes`, `› 2. No`,
 *   `● 1. Allow once`), picked with the arrow keys and Enter;
 * - menus without numbers, one option marked, with a hint under them
 *   (`Enter to confirm · Esc to cancel`), picked the same way;
 * - letter prompts: `[y/n]`, `(y/N)`, `(Y)es/(N)o [Yes]:`, answered with a
 *   letter and Enter.
 */

/** What a client sees of a dialog (`/status`'s `dialog`, `status_change` events, the 409 of `/message`). */
export interface Dialog {
  /** The question, as the screen shows it. */
  text: string;
  /** The options' labels in screen order; `POST /dialog {"option": N}` picks the N-th (1-based). */
  options: string[];
}

/** A dialog with what answering it needs. */
export interface DetectedDialog extends Dialog {
  /** `menu`: arrow keys to the option, then Enter. `letters`: the option's letter, then Enter. */
  kind: 'menu' | 'letters';
  /** Index (0-based) of the option a menu has selected. */
  selected: number;
  /** Letters of a letter prompt, one per option. */
  letters?: string[];
}

/** The part of the screen a dialog detector reads. */
export interface DialogScreen {
  /** The visible rows. */
  lines: readonly string[];
}

const BORDER_LEFT = /^\s*[│┃║|▌]\s?/u;
const BORDER_RIGHT = /\s*[│┃║|]\s*$/u;
const FRAME = /^\s*(?:[╭╰┌└╔╚├]|[─━═╌]{4,})/u;
const MENU_OPTION = /^(?<marker>[❯›>▶●◉→]\s*|[○◯◦]\s*)?(?<number>\d{1,2})[.)]\s+(?<label>\S.*)$/u;
const SELECTED_MARKER = /^[❯›>▶●◉→]/u;
const LETTER_PROMPT = /[[(]\s*([a-z])\s*\/\s*([a-z])((?:\s*\/\s*[a-z])*)\s*[\])]\s*:?\s*(?:\[[^\]]*\]\s*:?)?\s*$/iu;
const SPELLED_PROMPT = /((?:\([A-Z]\)[\w' ]*\/?){2,})\s*(?:\[[^\]]*\])?\s*:?\s*$/u;
const LETTER_NAMES: Record<string, string> = { y: 'Yes', n: 'No', a: 'All', t: 'Trust', s: 'Skip', d: "Don't ask again" };

/** A row without the box border around it. */
function unframed(line: string): string {
  return line.replace(BORDER_LEFT, '').replace(BORDER_RIGHT, '').trimEnd();
}

/**
 * The question above row `end`: the rows up to a frame line or `blankRun` blank rows in a row
 * (at most 10 rows), blank rows at the ends dropped.
 */
function questionAbove(rows: readonly string[], raw: readonly string[], end: number, blankRun = 2): string {
  const taken: string[] = [];
  let blanks = 0;
  for (let i = end - 1; i >= 0 && taken.length < 10; i--) {
    if (FRAME.test(raw[i]!) || FRAME.test(rows[i]!)) break;
    const row = rows[i]!.trim();
    if (row === '') {
      if (++blanks >= blankRun && (blankRun === 1 || taken.some((line) => line !== ''))) break;
    } else blanks = 0;
    taken.unshift(row);
  }
  while (taken[0] === '') taken.shift();
  while (taken.at(-1) === '') taken.pop();
  return taken.filter((line, index) => line !== '' || taken[index - 1] !== '').join('\n');
}

function findMenu(rows: readonly string[], raw: readonly string[]): DetectedDialog | undefined {
  // The menu must be near the bottom: only a hint, a frame or blank rows may follow it.
  const bottom = rows.length;
  for (let end = bottom - 1; end >= Math.max(0, bottom - 14); end--) {
    const last = MENU_OPTION.exec(rows[end]!.trim());
    if (!last) continue;
    const options: string[] = [];
    let selected = -1;
    let first = end;
    for (let i = end; i >= 0; i--) {
      const match = MENU_OPTION.exec(rows[i]!.trim());
      if (!match) break;
      const number = Number(match.groups!.number);
      if (options.length > 0 && number !== Number(MENU_OPTION.exec(rows[i + 1]!.trim())!.groups!.number) - 1) break;
      options.unshift(match.groups!.label!.trim());
      if (match.groups!.marker && SELECTED_MARKER.test(match.groups!.marker)) selected = i;
      first = i;
      if (number === 1) break;
    }
    const firstNumber = Number(MENU_OPTION.exec(rows[first]!.trim())!.groups!.number);
    // A numbered list in a reply has no selection marker; a menu has exactly one row marked.
    if (options.length < 2 || firstNumber !== 1 || selected < 0) return undefined;
    return { kind: 'menu', text: questionAbove(rows, raw, first), options, selected: selected - first };
  }
  return undefined;
}

function findLetterPrompt(rows: readonly string[], raw: readonly string[]): DetectedDialog | undefined {
  const filled = rows.map((row, index) => ({ row: row.trim(), index })).filter((entry) => entry.row !== '');
  // The prompt is the last row, or the last but one or two when the agent draws its input line under it.
  for (const { row, index } of filled.slice(-3).reverse()) {
    const spelled = SPELLED_PROMPT.exec(row);
    if (spelled) {
      const parts = [...spelled[1]!.matchAll(/\(([A-Z])\)([\w' ]*)/gu)];
      const letters = parts.map((part) => part[1]!.toLowerCase());
      const options = parts.map((part) => `${part[1]}${part[2]}`.trim());
      return { kind: 'letters', text: dialogText(rows, raw, index, row.slice(0, spelled.index)), options, letters, selected: 0 };
    }
    const bracketed = LETTER_PROMPT.exec(row);
    if (bracketed) {
      const letters = [bracketed[1]!, bracketed[2]!, ...(bracketed[3]?.match(/[a-z]/giu) ?? [])].map((l) => l.toLowerCase());
      const options = letters.map((letter) => LETTER_NAMES[letter] ?? letter);
      return { kind: 'letters', text: dialogText(rows, raw, index, row.slice(0, bracketed.index)), options, letters, selected: 0 };
    }
  }
  return undefined;
}

function dialogText(rows: readonly string[], raw: readonly string[], index: number, question: string): string {
  // A letter prompt's own row holds the question; only the rows right above it (no blank row between) belong to it.
  const above = questionAbove(rows, raw, index, 1);
  const own = question.trim();
  return own ? [above, own].filter(Boolean).join('\n') : above;
}

/**
 * The dialog on `screen`, if one is shown.
 *
 * @example
 * ```ts
 * detectDialog({ lines: ['Do you trust this folder?', '❯ 1. Yes', '  2. No'] });
 * // { kind: 'menu', text: 'Do you trust this folder?', options: ['Yes', 'No'], selected: 0 }
 * ```
 */
export function detectDialog(screen: DialogScreen): DetectedDialog | undefined {
  const raw = [...screen.lines];
  while (raw.length > 0 && raw.at(-1)!.trim() === '') raw.pop();
  const rows = raw.map(unframed);
  return findMenu(rows, raw) ?? findPlainMenu(rows, raw) ?? findLetterPrompt(rows, raw);
}

/** The hint under a menu whose options carry no numbers ("Enter to confirm · Esc to cancel"). */
const MENU_HINT = /\b(?:Enter|Return)\s+to\s+(?:confirm|select|choose|continue)\b|↑\s*\/?\s*↓\s+to\s+(?:navigate|select|move)\b/iu;
const PLAIN_SELECTED = /^(?<indent>\s*)[❯›▶→]\s+(?=\S)/u;

/**
 * A menu without numbers (Claude Code's trust prompt: `❯ No, exit` over `  Yes, I trust this
 * folder`): rows whose labels start at one column, one of them marked, with a selection hint
 * under them. The hint is required: an input line (`❯ `) alone is no menu.
 */
function findPlainMenu(rows: readonly string[], raw: readonly string[]): DetectedDialog | undefined {
  const bottom = rows.length;
  for (let hint = bottom - 1; hint >= Math.max(1, bottom - 6); hint--) {
    if (!MENU_HINT.test(rows[hint]!)) continue;
    let end = hint - 1;
    while (end > 0 && rows[end]!.trim() === '') end--;
    let first = end;
    while (first > 0 && rows[first - 1]!.trim() !== '') first--;
    const block = rows.slice(first, end + 1);
    const marked = block.map((row) => PLAIN_SELECTED.exec(row)).filter((match) => match !== null);
    if (marked.length !== 1 || block.length < 2) return undefined;
    const column = marked[0]![0].length;
    // Every row is an option: the marked one, or one whose label starts where the marked label does.
    if (!block.every((row) => PLAIN_SELECTED.test(row) || (/^\s*/u.exec(row)![0].length === column && row.trim() !== ''))) return undefined;
    const selected = block.findIndex((row) => PLAIN_SELECTED.test(row));
    const options = block.map((row) => row.slice(column).trim());
    return { kind: 'menu', text: questionAbove(rows, raw, first), options, selected };
  }
  return undefined;
}

/** Arrow-down and arrow-up as a terminal sends them. */
export const ARROW_DOWN = '\x1b[B';
export const ARROW_UP = '\x1b[A';

/**
 * The key presses that pick option `option` (1-based) of `dialog`, one
 * string per press: arrows from the selected option to the wanted one, then
 * Enter; or the option's letter, then Enter.
 *
 * @example
 * ```ts
 * dialogKeys({ kind: 'menu', text: '', options: ['Yes', 'No'], selected: 0 }, 2); // ['\x1b[B', '\r']
 * ```
 */
export function dialogKeys(dialog: DetectedDialog, option: number): string[] {
  const index = option - 1;
  if (dialog.kind === 'letters') return [dialog.letters?.[index] ?? '', '\r'];
  const moves = index - dialog.selected;
  return [...Array<string>(Math.abs(moves)).fill(moves > 0 ? ARROW_DOWN : ARROW_UP), '\r'];
}

/** What clients see of a detected dialog. */
export function publicDialog(dialog: DetectedDialog): Dialog {
  return { text: dialog.text, options: [...dialog.options] };
}
