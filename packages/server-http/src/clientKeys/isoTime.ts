/**
 * @module isoTime
 * `new Date(ms).toISOString()` for many times close together: the guard's
 * flush turns every used key's last-used time into text, 10,000 of them per
 * flush with 10,000 keys in use, and `toISOString` costs about 3 µs each.
 * Times of one flush fall in a few seconds, so the text up to the second is
 * kept and only the milliseconds are formatted: about a tenth of the cost.
 */

/** Formats epoch milliseconds as `toISOString` does, reusing the text of the last second formatted. */
export class IsoTimes {
  private second = Number.NaN;
  /** `toISOString()` of `second` without its `000Z`. */
  private prefix = '';

  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      const whole = new Date(second * 1000).toISOString();
      this.second = second;
      this.prefix = whole.slice(0, -4);
    }
    const milli = ms - second * 1000;
    return `${this.prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  }
}
