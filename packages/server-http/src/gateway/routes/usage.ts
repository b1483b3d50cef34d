/**
 * @module usage
 * `GET /v0/management/usage`: usage and spend over a time range, grouped by
 * client key, tenant, provider or model: totals per group and a series per
 * bucket for charts, as JSON, or the series as CSV (`format=csv` or
 * `Accept: text/csv`). The range is read from ISO 8601 or epoch times and
 * bounded, so one request cannot ask for millions of buckets.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ApiError, fieldDetail } from '@switchyard/http-kit';
import { USAGE_GROUP_BYS, type UsageSeriesQuery, usageCsv } from '@switchyard/observability';
import { parseDuration } from '@switchyard/observability/config';
import { USAGE_MINUTE_MS } from '@switchyard/observability/usage';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

/** The default range: the last day. */
export const DEFAULT_USAGE_RANGE_MS = 86_400_000;
/** The longest range one request may ask for. */
export const MAX_USAGE_RANGE_MS = 366 * 86_400_000;
/** The most buckets one request may ask for (range / step). */
export const MAX_USAGE_BUCKETS = 10_000;
/** Steps chosen when none is asked for: the finest that keeps the series within {@link AUTO_STEP_BUCKETS} buckets. */
const AUTO_STEPS_MS = [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000];
const AUTO_STEP_BUCKETS = 1440;

/** Epoch numbers below this are seconds; at or above it, milliseconds (1e11 s is the year 5138). */
const EPOCH_SECONDS_BELOW = 1e11;

/** A time as the query gives it: ISO 8601, or epoch seconds or milliseconds. */
export function parseTime(value: string, field: string): number {
  const text = value.trim();
  const epoch = /^\d{1,16}(\.\d+)?$/.test(text) ? Number(text) : undefined;
  const ms = epoch === undefined ? Date.parse(text) : epoch < EPOCH_SECONDS_BELOW ? epoch * 1000 : epoch;
  // Date.parse also takes loose forms ("March 7"); only ISO 8601's shape (a date first) is accepted.
  if (!Number.isFinite(ms) || (epoch === undefined && !/^\d{4}-\d{2}-\d{2}/.test(text))) {
    throw new ApiError('bad_request', `${field} must be an ISO 8601 time (2026-03-01T12:00:00Z) or epoch seconds or milliseconds`, {
      details: fieldDetail(field, 'not a time'),
    });
  }
  return ms;
}

const floorMinute = (ms: number) => Math.floor(ms / USAGE_MINUTE_MS) * USAGE_MINUTE_MS;
const ceilMinute = (ms: number) => Math.ceil(ms / USAGE_MINUTE_MS) * USAGE_MINUTE_MS;

/** The store query a request's parameters ask for, with defaults, alignment to the minute and bounds. */
export function usageQueryOf(
  params: { from?: string | undefined; to?: string | undefined; step?: string | undefined; group_by: UsageSeriesQuery['groupBy'] },
  now: number,
): UsageSeriesQuery {
  const bad = (field: string, message: string) => new ApiError('bad_request', message, { details: fieldDetail(field, message) });
  const to = ceilMinute(params.to === undefined ? now : parseTime(params.to, 'to'));
  const from = floorMinute(params.from === undefined ? to - DEFAULT_USAGE_RANGE_MS : parseTime(params.from, 'from'));
  if (from >= to) throw bad('from', 'from must be before to');
  if (to - from > MAX_USAGE_RANGE_MS) throw bad('from', `the range may span at most ${MAX_USAGE_RANGE_MS / 86_400_000} days`);
  let stepMs: number;
  if (params.step === undefined) {
    stepMs = AUTO_STEPS_MS.find((step) => (to - from) / step <= AUTO_STEP_BUCKETS) ?? AUTO_STEPS_MS.at(-1)!;
  } else {
    try {
      stepMs = parseDuration(params.step);
    } catch {
      throw bad('step', 'step must be a duration such as 1m, 15m, 1h or 1d');
    }
    if (stepMs < USAGE_MINUTE_MS || stepMs % USAGE_MINUTE_MS !== 0)
      throw bad('step', 'step must be a whole number of minutes (1m at least)');
    if ((to - from) / stepMs > MAX_USAGE_BUCKETS) {
      throw bad('step', `the range holds more than ${MAX_USAGE_BUCKETS} steps of ${params.step}: ask for a longer step or a shorter range`);
    }
  }
  return { from, to, groupBy: params.group_by, stepMs };
}

const Counts = {
  requests: z.number().int(),
  errors: z.number().int(),
  cache_hits: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost: z.number().openapi({ description: "tokens / 1000 × providers.<p>.cost_per_1k_tokens, in the prices' currency" }),
};
const GroupTotals = z.object({ group: z.string(), label: z.string(), ...Counts });

const UsageReportSchema = z
  .object({
    from: z.string().openapi({ example: '2026-03-01T00:00:00.000Z' }),
    to: z.string(),
    group_by: z.enum(USAGE_GROUP_BYS),
    step_seconds: z.number().int(),
    total: z.object(Counts),
    groups: z.array(GroupTotals),
    series: z.array(GroupTotals.extend({ start: z.string() })),
  })
  .openapi('UsageReport');

const query = (name: string, description: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: 'query' }, description });

/** Registers `GET /v0/management/usage`. */
export function registerUsageRoutes(app: ControlPlaneApp, gateway: Pick<GatewayParts, 'usage' | 'scheduler'>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/usage',
      tags: ['management'],
      security: [{ managementKey: [] }],
      summary: 'Usage and spend by client key, tenant, provider or model over a time range, as JSON or CSV',
      request: {
        query: z.object({
          from: query(
            'from',
            'Start (inclusive), ISO 8601 or epoch seconds/milliseconds; default: a day before `to`. Rounded down to the minute.',
          ),
          to: query('to', 'End (exclusive), ISO 8601 or epoch seconds/milliseconds; default: now. Rounded up to the minute.'),
          group_by: z
            .enum(USAGE_GROUP_BYS)
            .default('key')
            .openapi({ param: { name: 'group_by', in: 'query' } }),
          step: query('step', 'Bucket length of the series (1m, 15m, 1h, 1d; whole minutes); default: the finest within 1440 buckets.'),
          format: z
            .enum(['json', 'csv'])
            .optional()
            .openapi({ param: { name: 'format', in: 'query' }, description: 'csv: the series as CSV (also with Accept: text/csv)' }),
        }),
      },
      responses: {
        200: {
          ...jsonResponse(UsageReportSchema, 'Totals per group and the per-bucket series, or the series as CSV'),
          content: {
            'application/json': { schema: UsageReportSchema },
            'text/csv': { schema: z.string() },
          },
        },
        400: { description: 'A bad time, range, step or group_by', content: { 'application/json': { schema: ErrorSchema } } },
        ...protectedErrors,
      },
    }),
    async (c) => {
      const params = c.req.valid('query');
      const usage = gateway.usage;
      if (!usage) throw new ApiError('not_found', 'usage accounting is off (usage.enabled is false)');
      const report = await usage.query.report(usageQueryOf(params, gateway.scheduler.now()));
      const wantsCsv = params.format === 'csv' || (params.format === undefined && /\btext\/csv\b/i.test(c.req.header('accept') ?? ''));
      if (!wantsCsv) return c.json(report, 200);
      const name = `usage-${report.group_by}-${report.from}-${report.to}.csv`.replaceAll(':', '');
      return c.body(usageCsv(report), 200, {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="${name}"`,
      });
    },
  );
}
