/**
 * @module schemas
 * zod 4 schemas of the config sections this package owns: `metrics`,
 * `logging`, `tracing`, `alerts` and `notifications`, with the documented
 * defaults. The server composes them into its whole config. Objects are
 * strict: an unknown key (a typo) is an error, not silently dropped. Durations and
 * sizes come out as milliseconds and bytes; alert conditions are parsed
 * here, so a bad one fails at load with its column.
 */
import { z } from 'zod';
import { parseCondition } from '../alerts/expression.js';
import type { ObservabilityError } from '../errors.js';
import { parseSmtpServer } from '../notify/smtpServer.js';
import { parseDuration, parseSize } from './units.js';

function parsed<T>(parse: (input: string | number) => T, what: string) {
  return z.union([z.string(), z.number()], { error: `expected a ${what}` }).transform((input, ctx) => {
    try {
      return parse(input);
    } catch (error) {
      ctx.issues.push({ code: 'custom', message: (error as Error).message, input });
      return z.NEVER;
    }
  });
}

/** A duration (`100ms`, `30s`, `5m`, `1h30m`, `30d`) or milliseconds; parses to milliseconds. */
export const durationSchema = parsed(parseDuration, 'duration such as 30s or 5m');
/** A size (`512K`, `100M`, `1G`, binary units) or bytes; parses to bytes. */
export const sizeSchema = parsed(parseSize, 'size such as 100M');

const port = z.number().int().min(0).max(65_535);
const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' });

/** `metrics.*`: the Prometheus endpoint. */
export const metricsConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Port of the separate metrics listener. */
  port: port.default(9090),
  path: z.string().startsWith('/', 'the path must start with "/"').default('/metrics'),
  /** Interface of the metrics listener. Loopback unless told otherwise. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Distinct values kept per label (models, credentials, cooldown keys, ...) before the rest fold into `other`. */
  max_label_values: z.number().int().min(1).max(10_000).default(100),
  /** Node process metrics (`process_*`, `nodejs_*`) next to the svc_* ones. */
  process_metrics: z.boolean().default(true),
});

/** The levels `logging.level` accepts. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** `logging.*`: JSON lines to stdout, stderr or a rotated file. */
export const loggingConfigSchema = z
  .strictObject({
    level: z.enum(LOG_LEVELS).default('info'),
    format: z.literal('json', { error: 'the only log format is json' }).default('json'),
    /** `stdout`, `stderr` or `file` (then `file` names it). */
    output: z.enum(['stdout', 'stderr', 'file']).default('stdout'),
    file: z.string().min(1).default('./logs/switchyard.log'),
    rotation: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** Rotate once the file would grow past this. */
        max_size: sizeSchema.default(100 * 1024 ** 2),
        /** Delete rotated files older than this; 0 keeps them regardless of age. */
        max_age: durationSchema.default(30 * 86_400_000),
        /** Rotated files kept; 0 keeps them regardless of count. */
        max_backups: z.number().int().min(0).default(10),
      })
      .prefault({}),
    /** Extra pino redaction paths (`req.headers["x-secret"]`) on top of the built-in secret keys. */
    redact: z.array(z.string().min(1)).default([]),
  })
  .superRefine((value, ctx) => {
    if (value.rotation.enabled && value.output === 'file' && value.rotation.max_size < 1024) {
      ctx.issues.push({ code: 'custom', message: 'max_size must be at least 1K', path: ['rotation', 'max_size'], input: value });
    }
  });

const DEFAULT_TRACING_ENDPOINTS = {
  otlp: 'http://127.0.0.1:4318/v1/traces',
  jaeger: 'http://127.0.0.1:4318/v1/traces',
  zipkin: 'http://127.0.0.1:9411/api/v2/spans',
} as const;

/** `tracing.*`: OpenTelemetry spans to an OTLP, Jaeger (its OTLP endpoint) or Zipkin collector. */
export const tracingConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    exporter: z.enum(['otlp', 'zipkin', 'jaeger']).default('otlp'),
    /** Collector URL; defaults to the exporter's usual local endpoint. */
    endpoint: httpUrl.optional(),
    service_name: z.string().min(1).default('switchyard'),
    /** Share of new traces recorded, 0–1. Requests that arrive with a sampled parent follow the parent. */
    sample_rate: z.number().min(0).max(1).default(0.1),
    /** Extra headers to the collector (an auth token, say); redacted from config output. */
    headers: z.record(z.string(), z.string()).default({}),
  })
  .transform((value) => ({ ...value, endpoint: value.endpoint ?? DEFAULT_TRACING_ENDPOINTS[value.exporter] }));

/** Notification channels, as alert rules name them. */
export const CHANNELS = ['chat', 'pager', 'email'] as const;
/** A notification channel. */
export type Channel = (typeof CHANNELS)[number];

/** Alert severities (PagerDuty's four). */
export const SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;

/** One `alerts.rules[]` entry. */
export const alertRuleSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/, 'a rule name is a letter or _ then letters, digits, _ . - (≤ 100)'),
  condition: z
    .string()
    .min(1, 'the condition is empty')
    .superRefine((condition, ctx) => {
      try {
        parseCondition(condition);
      } catch (error) {
        ctx.issues.push({ code: 'custom', message: (error as Error).message, input: condition });
      }
    }),
  /** How long the condition must hold before the rule fires. */
  duration: durationSchema.default(0),
  severity: z.enum(SEVERITIES).default('warning'),
  notifications: z.array(z.enum(CHANNELS)).default([]),
  /** A sentence for the notification; the condition is shown when absent. */
  summary: z.string().optional(),
});

/** The documented example rules: error rate, provider down, rate limits, p95 latency. */
export const DEFAULT_ALERT_RULES: z.input<typeof alertRuleSchema>[] = [
  { name: 'high_error_rate', condition: 'error_rate > 0.05', duration: '5m', severity: 'warning', notifications: ['chat', 'email'] },
  {
    name: 'provider_down',
    condition: 'provider_health == unhealthy',
    duration: '2m',
    severity: 'critical',
    notifications: ['chat', 'pager'],
  },
  { name: 'rate_limit_exceeded', condition: 'rate_limit_count > 10', duration: '1m', severity: 'warning', notifications: ['chat'] },
  { name: 'high_latency', condition: 'p95_latency > 5s', duration: '10m', severity: 'warning', notifications: ['chat'] },
];

/** `alerts.*`. */
export const alertsConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** How often every rule is evaluated. */
    evaluation_interval: durationSchema.default(15_000),
    rules: z.array(alertRuleSchema).prefault(DEFAULT_ALERT_RULES),
  })
  .superRefine(
    (value, ctx) => {
      // Runs even when other fields failed, so a bad config lists every problem at once.
      const rules: unknown[] = Array.isArray(value?.rules) ? value.rules : [];
      const seen = new Set<string>();
      rules.forEach((rule, index) => {
        const name = (rule as { name?: unknown } | null)?.name;
        if (typeof name !== 'string') return;
        if (seen.has(name)) {
          ctx.issues.push({
            code: 'custom',
            message: `duplicate rule name ${JSON.stringify(name)}`,
            path: ['rules', index, 'name'],
            input: name,
          });
        }
        seen.add(name);
      });
      if (typeof value?.evaluation_interval === 'number' && value.evaluation_interval < 100) {
        ctx.issues.push({
          code: 'custom',
          message: 'evaluation_interval must be at least 100ms',
          path: ['evaluation_interval'],
          input: value,
        });
      }
    },
    { when: () => true },
  );

const chatSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Slack-style incoming webhook URL (a secret: redacted from config output). */
    webhook_url: httpUrl.optional(),
    channel: z.string().optional(),
    username: z.string().default('switchyard'),
  })
  .superRefine(requireWhenEnabled('webhook_url'), { when: () => true });

const pagerSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** REST API key. Events v2 authenticates by `service_key` alone, so this is kept for compatibility and never sent. */
    api_key: z.string().optional(),
    /** The Events v2 integration (routing) key. */
    service_key: z.string().optional(),
    /** Events API base URL. */
    url: httpUrl.default('https://events.pagerduty.com'),
  })
  .superRefine(requireWhenEnabled('service_key'), { when: () => true });

const emailSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** `host[:port]` or `smtp(s)://[user:pass@]host[:port]`. */
    smtp_server: z
      .string()
      .superRefine((value, ctx) => {
        try {
          parseSmtpServer(value);
        } catch (error) {
          ctx.issues.push({ code: 'custom', message: (error as ObservabilityError).message, input: '[redacted]' });
        }
      })
      .optional(),
    from: z.string().optional(),
    to: z.array(z.string().min(3)).default([]),
    username: z.string().optional(),
    password: z.string().optional(),
  })
  .superRefine(requireWhenEnabled('smtp_server', 'from'), { when: () => true })
  .superRefine(
    (value, ctx) => {
      if (value?.enabled === true && Array.isArray(value.to) && value.to.length === 0) {
        ctx.issues.push({ code: 'custom', message: 'at least one recipient is required when enabled', path: ['to'], input: value.to });
      }
    },
    { when: () => true },
  );

/** `notifications.*`: the channels alert rules and credential rotations go to. */
export const notificationsConfigSchema = z.strictObject({
  chat: chatSchema.prefault({}),
  pager: pagerSchema.prefault({}),
  email: emailSchema.prefault({}),
  /** Retries of a failed delivery: exponential backoff with full jitter. */
  retry: z
    .strictObject({
      max_attempts: z.number().int().min(1).max(20).default(5),
      initial_backoff: durationSchema.default(1000),
      max_backoff: durationSchema.default(60_000),
      /** Time limit of one delivery attempt. */
      timeout: durationSchema.default(10_000),
    })
    .prefault({}),
  /** Notices when the credential pool rotates away from a credential. */
  credential_rotation: z
    .strictObject({
      enabled: z.boolean().default(true),
      channels: z.array(z.enum(CHANNELS)).default(['chat', 'email']),
      /** At most one notice per provider and reason within this time. */
      min_interval: durationSchema.default(300_000),
    })
    .prefault({}),
});

function requireWhenEnabled(...keys: string[]) {
  return (value: Record<string, unknown> & { enabled: boolean }, ctx: z.RefinementCtx) => {
    // Runs even when other fields failed (see `when`), so `value` may be partial.
    if (typeof value !== 'object' || value === null || value.enabled !== true) return;
    for (const key of keys) {
      if (value[key] === undefined || value[key] === '') {
        ctx.issues.push({ code: 'custom', message: `${key} is required when enabled`, path: [key], input: undefined });
      }
    }
  };
}

/** The five sections together, for servers that take them as one block. */
export const observabilityConfigSchema = z.strictObject({
  metrics: metricsConfigSchema.prefault({}),
  logging: loggingConfigSchema.prefault({}),
  tracing: tracingConfigSchema.prefault({}),
  alerts: alertsConfigSchema.prefault({}),
  notifications: notificationsConfigSchema.prefault({}),
});

/** Config paths that hold secrets: redact them wherever a config is shown. */
export const SECRET_CONFIG_PATHS = [
  'notifications.chat.webhook_url',
  'notifications.pager.api_key',
  'notifications.pager.service_key',
  'notifications.email.smtp_server',
  'notifications.email.password',
  'tracing.headers',
] as const;

export type MetricsConfig = z.output<typeof metricsConfigSchema>;
export type LoggingConfig = z.output<typeof loggingConfigSchema>;
export type TracingConfig = z.output<typeof tracingConfigSchema>;
export type AlertRuleConfig = z.output<typeof alertRuleSchema>;
export type AlertsConfig = z.output<typeof alertsConfigSchema>;
export type NotificationsConfig = z.output<typeof notificationsConfigSchema>;
export type ObservabilityConfig = z.output<typeof observabilityConfigSchema>;
/** What a user may write (durations as strings, defaults left out). */
export type ObservabilityConfigInput = z.input<typeof observabilityConfigSchema>;
