/**
 * @module @switchyard/observability/usage
 * Helpers for `UsageStore` adapters (the gateway's SQLite and PostgreSQL
 * stores): rollup ids, bucket ordering, count arithmetic, the minute
 * bucket, and the dimension values the recorder writes. The port, the
 * memory store, the recorder and the query are on the package root.
 *
 * @example
 * ```ts
 * import { addCounts, rollupId, USAGE_MINUTE_MS } from '@switchyard/observability/usage';
 * ```
 */

export { csvField, USAGE_CSV_COLUMNS } from './usage/usageQuery.js';
export { ANONYMOUS_CLIENT, DEFAULT_USAGE_FLUSH_INTERVAL_MS, NO_PROVIDER } from './usage/usageRecorder.js';
export { addCounts, compareBuckets, emptyCounts, groupValue, rollupId, USAGE_MINUTE_MS } from './usage/usageStore.js';
