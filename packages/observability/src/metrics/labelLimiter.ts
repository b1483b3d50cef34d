/**
 * @module labelLimiter
 * Keeps a label's cardinality bounded. Every distinct label value is a
 * time series in Prometheus, and a model name is whatever a client sends:
 * without a bound, a client cycling model names would grow the registry,
 * and the scrape, without limit. The first `max` values seen (plus any
 * declared up front) keep their name; later ones fold into `other`.
 */

/** The label value that unknown values fold into past the limit. */
export const OTHER_LABEL = 'other';
/** The label value of an empty or missing value. */
export const UNKNOWN_LABEL = 'unknown';

const MAX_VALUE_LENGTH = 128;

/**
 * Folds label values into a bounded set.
 *
 * @example
 * ```ts
 * const models = new LabelLimiter(2, ['gpt-4o']);
 * models.fold('gpt-4o');  // 'gpt-4o' (declared: never counts against the limit)
 * models.fold('a');       // 'a'
 * models.fold('b');       // 'b'
 * models.fold('c');       // 'other'
 * ```
 */
export class LabelLimiter {
  private readonly seen = new Set<string>();
  private readonly declared: ReadonlySet<string>;
  private foldedCount = 0;

  constructor(
    readonly max: number,
    declared: Iterable<string> = [],
  ) {
    this.declared = new Set(declared);
  }

  /** The value to use as the label: itself, `unknown` when empty, or `other` past the limit. */
  fold(value: string | null | undefined): string {
    if (value === null || value === undefined || value === '') return UNKNOWN_LABEL;
    if (this.declared.has(value) || this.seen.has(value)) return value;
    if (value.length > MAX_VALUE_LENGTH || this.seen.size >= this.max) {
      this.foldedCount++;
      return OTHER_LABEL;
    }
    this.seen.add(value);
    return value;
  }

  /** How many values were folded into `other` so far. */
  get folded(): number {
    return this.foldedCount;
  }

  /** Distinct values admitted on top of the declared ones. */
  get size(): number {
    return this.seen.size;
  }
}
