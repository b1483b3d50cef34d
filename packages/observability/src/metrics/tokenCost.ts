/**
 * @module tokenCost
 * The price of a request's tokens, from `providers.<p>.cost_per_1k_tokens`:
 * one formula, shared by `svc_cost_total` and the per-key usage rollups, so
 * the two never disagree on what a request cost.
 */

/** A price per 1,000 tokens, input and output. */
export interface TokenPrice {
  input: number;
  output: number;
}

/**
 * What `tokens` cost at `price`: tokens / 1000 × the price per 1,000 (input and output), in the price's currency.
 *
 * @example
 * ```ts
 * tokenCost({ input: 1000, output: 500 }, { input: 0.5, output: 1.5 }); // 1.25
 * ```
 */
export function tokenCost(tokens: { input: number; output: number }, price: TokenPrice): number {
  return (tokens.input * price.input + tokens.output * price.output) / 1000;
}
