/**
 * @module glob
 * Model-name globs (`gpt-4o*`, `claude-?-*`), shared by the translators'
 * per-model settings (`thinking_modes`) and the relay's model router. Model
 * names come from clients, so matching never backtracks.
 */

/** Counts the character comparisons of {@link Glob.test}, for tests of its cost bound. */
export interface GlobSteps {
  count: number;
}

/**
 * A compiled glob (`*` any run, `?` one character) that matches without
 * backtracking. Model names come from clients; a regular expression such as
 * `^a.*b.*c$` can take time polynomial in the name's length on a hostile
 * name, this never more than the name's length times the pattern's: the
 * pattern splits at its stars into literal segments, the first anchored at
 * the start, the last at the end, and each one between at its leftmost place
 * after the one before (the leftmost place always leaves the most room for
 * the rest, so it is never revisited).
 *
 * @example
 * ```ts
 * new Glob('gemini-*-flash*').test('gemini-2.5-flash-lite'); // true
 * ```
 */
export class Glob {
  private readonly segments: string[];
  private readonly fixedLength: number;

  constructor(readonly pattern: string) {
    this.segments = pattern.split('*');
    this.fixedLength = this.segments.reduce((sum, segment) => sum + segment.length, 0);
  }

  /** Whether `name` matches; `steps`, when given, counts each character compared. */
  test(name: string, steps?: GlobSteps): boolean {
    const segments = this.segments;
    const last = segments.length - 1;
    if (last === 0) return name.length === this.pattern.length && segmentAt(this.pattern, name, 0, steps);
    if (name.length < this.fixedLength) return false;
    const head = segments[0]!;
    const tail = segments[last]!;
    if (!segmentAt(head, name, 0, steps)) return false;
    const end = name.length - tail.length;
    if (!segmentAt(tail, name, end, steps)) return false;
    let from = head.length;
    for (let i = 1; i < last; i++) {
      const segment = segments[i]!;
      let at = from;
      while (at + segment.length <= end && !segmentAt(segment, name, at, steps)) at++;
      if (at + segment.length > end) return false;
      from = at + segment.length;
    }
    return true;
  }
}

/** Whether `segment` (where `?` is any one character) matches `name` at `at`. */
function segmentAt(segment: string, name: string, at: number, steps: GlobSteps | undefined): boolean {
  for (let i = 0; i < segment.length; i++) {
    if (steps) steps.count++;
    const ch = segment.charCodeAt(i);
    if (ch !== 63 /* ? */ && ch !== name.charCodeAt(at + i)) return false;
  }
  return true;
}
