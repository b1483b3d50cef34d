/**
 * @module redaction
 * Keeps secrets out of log lines, two ways: pino's path redaction for keys
 * that hold secrets (`authorization`, `api_key`, `token`, ... up to three
 * levels deep), and a scrubber for message strings and error texts that
 * might quote one (`Bearer …`, `sk-…`, `?key=…`).
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

function segment(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/**
 * pino redaction paths for {@link SECRET_KEYS} at the top level and one or
 * two objects down (`headers.authorization`, `req.headers.authorization`),
 * plus `extra`.
 *
 * @example
 * ```ts
 * pino({ redact: { paths: redactionPaths(['custom.secret']), censor: REDACTED } });
 * ```
 */
export function redactionPaths(extra: readonly string[] = []): string[] {
  const paths: string[] = [];
  for (const key of SECRET_KEYS) {
    const tail = segment(key);
    paths.push(tail.startsWith('.') ? tail.slice(1) : tail, `*${tail}`, `*.*${tail}`);
  }
  return [...paths, ...extra];
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
