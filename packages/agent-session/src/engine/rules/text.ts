/**
 * @module text
 * The building blocks of message rules: finding what is new on a screen,
 * stripping the echo of the user's input, and trimming. They work on plain
 * screen text (lines joined with `\n`, no escape sequences) and never throw.
 */

/** Characters whitespace-insensitive matching ignores. */
const WHITESPACE = /\s/u;
/** How many characters of the input's first line locate its echo. */
const PREFIX_CHARS = 8;
/** How many lines at the top of the text may hold the start of the echo. */
const SEARCH_LINES = 6;
/** How far matching may skip ahead in the text (prompts, box borders) or the input (characters the UI dropped). */
const LOOKAHEAD = 5;

interface Located {
  char: string;
  line: number;
}

function located(text: string): Located[] {
  const out: Located[] = [];
  text.split('\n').forEach((line, index) => {
    for (const char of line) if (!WHITESPACE.test(char)) out.push({ char, line: index });
  });
  return out;
}

const isWordChar = (char: string) => /[\p{L}\p{N}_]/u.test(char);

/**
 * Removes the echo of `input` from the top of `text`: every line up to and
 * including the last line that holds echoed input. Matching ignores
 * whitespace (the terminal wraps and indents), tolerates prompts and box
 * borders between echoed lines (`... `, `│`), and characters the program
 * left out. When the echo is not found near the top, `text` is returned
 * unchanged.
 *
 * @example
 * ```ts
 * stripEcho('>>> print(1 + 1)\n2', 'print(1 + 1)'); // '2'
 * ```
 */
export function stripEcho(text: string, input: string): string {
  const wanted = [...input].filter((char) => !WHITESPACE.test(char));
  if (wanted.length === 0) return text;
  const firstLine = input.split('\n').find((line) => line.trim() !== '') ?? '';
  const prefixLength = Math.min(PREFIX_CHARS, [...firstLine].filter((char) => !WHITESPACE.test(char)).length);
  const chars = located(text);
  const window = chars.filter((entry) => entry.line < SEARCH_LINES);
  const limit = Math.max(window.length, Math.min(chars.length, 40));
  const start = indexOfPrefix(chars, wanted, prefixLength, limit);
  if (start < 0) return text;
  let at = start + prefixLength - 1;
  let consumed = prefixLength - 1;
  while (consumed < wanted.length - 1) {
    const next = nextMatch(chars, wanted, at, consumed);
    if (!next) break;
    [at, consumed] = next;
  }
  const lastLine = chars[at]!.line;
  return text
    .split('\n')
    .slice(lastLine + 1)
    .join('\n');
}

function indexOfPrefix(chars: Located[], wanted: string[], length: number, limit: number): number {
  for (let i = 0; i < limit && i + length <= chars.length; i++) {
    let ok = true;
    for (let j = 0; j < length && ok; j++) ok = chars[i + j]!.char === wanted[j];
    if (ok) return i;
  }
  return -1;
}

/**
 * The next pair of equal characters. Skipping text (prompts, borders) is
 * tried before skipping input, because programs add chrome far more often
 * than they drop what was typed; only non-word characters may be skipped in
 * the text, so matching cannot wander into the reply.
 */
function nextMatch(chars: Located[], wanted: string[], at: number, consumed: number): [number, number] | undefined {
  for (let dj = 1; dj <= LOOKAHEAD && consumed + dj < wanted.length; dj++) {
    for (let di = 1; di <= LOOKAHEAD && at + di < chars.length; di++) {
      if (chars[at + di]!.char === wanted[consumed + dj]) return [at + di, consumed + dj];
      if (isWordChar(chars[at + di]!.char)) break;
    }
  }
  return undefined;
}

/**
 * The part of `after` that is new compared with `before`: everything from
 * the first line of `after` that cannot be matched, in order, to a line of
 * `before`. Lines that scrolled away (missing from `after`) are skipped, and
 * repeated lines (the same question asked twice) are matched in order, so a
 * repeat still counts as new.
 *
 * @example
 * ```ts
 * newSection(['title', 'old', '> _'], ['title', 'old', '> hi', 'answer', '> _']); // ['> hi', 'answer', '> _']
 * ```
 */
export function newSection(before: readonly string[], after: readonly string[]): string[] {
  const positions = new Map<string, number[]>();
  before.forEach((line, index) => {
    const key = line.trimEnd();
    const list = positions.get(key);
    if (list) list.push(index);
    else positions.set(key, [index]);
  });
  let cursor = 0;
  for (let i = 0; i < after.length; i++) {
    const list = positions.get(after[i]!.trimEnd());
    const next = list ? firstAtLeast(list, cursor) : undefined;
    if (next === undefined) return after.slice(i);
    cursor = next + 1;
  }
  return [];
}

function firstAtLeast(sorted: number[], min: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < min) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length ? sorted[lo] : undefined;
}

/**
 * Drops blank lines at both ends and trailing spaces on every line.
 *
 * @example
 * ```ts
 * trimBlankLines('\n  \nhello  \n\n'); // 'hello'
 * ```
 */
export function trimBlankLines(text: string): string {
  const lines = text.split('\n').map((line) => line.trimEnd());
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start] === '') start++;
  while (end > start && lines[end - 1] === '') end--;
  return lines.slice(start, end).join('\n');
}
