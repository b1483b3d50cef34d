/**
 * @module redaction
 * Keeps secrets out of log lines, two ways: a walk that replaces the values
 * of keys that hold secrets (`authorization`, `api_key`, `token`, ...) at
 * any depth up to four, and a scrubber for message strings and error texts
 * that might quote one (`Bearer …`, `sk-…`, `?key=…`).
 *
 * The walk is ours rather than pino's path redaction because wildcard paths
 * (`*.token`, `*.*.token`) cost pino about 200 µs a line, where the walk
 * costs a Set lookup per key and copies only objects that hold a secret.
 */

/** Keys whose values are secrets wherever they appear. */
export const SECRET_KEYS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-goog-api-key',
  'x-management-key',
  'api-key',
  'api_key',
  'apiKey',
  'token',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'id_token',
  'password',
  'pass',
  'secret',
  'secret_key',
  'secret-key',
  'client_secret',
  'clientSecret',
  'private_key',
  'privateKey',
  'service_key',
  'webhook_url',
  'smtp_server',
] as const;

/** The censor written in place of a secret. */
export const REDACTED = '[REDACTED]';

const SECRET_KEY_SET: ReadonlySet<string> = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));
const MAX_DEPTH = 4;

/** Verdicts per key seen: log lines reuse a small set of keys, so this saves a lower-casing per key per line. */
const verdicts = new Map<string, boolean>();

function isSecretKey(key: string): boolean {
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = SECRET_KEY_SET.has(key.toLowerCase());
    if (verdicts.size < 10_000) verdicts.set(key, verdict);
  }
  return verdict;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Returns `value` with the values of secret keys replaced by `[REDACTED]`,
 * in plain objects and arrays up to four levels deep. Objects without a
 * secret are returned as they are (no copy).
 *
 * @example
 * ```ts
 * redactSecrets({ headers: { authorization: 'Bearer x', accept: 'json' } }); // { headers: { authorization: '[REDACTED]', accept: 'json' } }
 * ```
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const redacted = typeof item === 'object' && item !== null ? redactSecrets(item, depth + 1) : item;
      if (redacted !== item) (copy ??= [...value])[i] = redacted;
    }
    return (copy ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = value[key];
    let redacted = item;
    if (isSecretKey(key)) redacted = item === undefined || item === null ? item : REDACTED;
    else if (typeof item === 'object' && item !== null) redacted = redactSecrets(item, depth + 1);
    if (redacted !== item) (copy ??= { ...value })[key] = redacted;
  }
  return (copy ?? value) as T;
}

const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(sk|pk|rk)-[A-Za-z0-9_-]{12,}/g,
  /\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /([?&](?:key|api_key|apikey|token|access_token|signature|sig)=)[^&\s"']+/gi,
  /(\/\/[^/\s:@]+:)[^@\s/]+(@)/g,
];

const QUICK_CHECK = /bearer|basic|token|sk-|pk-|rk-|gh[pousr]_|github_pat|AIza|xox|key=|sig|:\/\/[^/\s]*@/i;

/**
 * Replaces secret-looking substrings of a text: bearer tokens, API keys of
 * the common shapes, secret query parameters and URL passwords.
 *
 * @example
 * ```ts
 * scrubSecrets('upstream said 401 for Bearer sk-abc123def456ghi789'); // 'upstream said 401 for Bearer [REDACTED]'
 * ```
 */
export function scrubSecrets(text: string): string {
  if (!QUICK_CHECK.test(text)) return text;
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (match, ...groups) => {
      const first = groups[0];
      if (pattern.source.startsWith('\\b(Bearer')) return `${first} ${REDACTED}`;
      if (pattern.source.startsWith('([?&]')) return `${first}${REDACTED}`;
      if (pattern.source.startsWith('(\\/\\/')) return `${first}${REDACTED}${groups[1]}`;
      return match.length > 0 ? REDACTED : match;
    });
  }
  return out;
}
