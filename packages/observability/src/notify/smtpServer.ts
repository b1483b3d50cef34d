/**
 * @module smtpServer
 * Reads `notifications.email.smtp_server`: either `host[:port]` or a URL
 * (`smtp://user:pass@host:587`, `smtps://host:465`). Port 465 and `smtps:`
 * mean TLS from the first byte; anything else upgrades with STARTTLS when
 * the server offers it.
 */
import { ObservabilityError } from '../errors.js';

/** Where and how to reach the SMTP server. */
export interface SmtpServerAddress {
  host: string;
  port: number;
  /** TLS from the first byte (465 / smtps). */
  secure: boolean;
  /** Credentials embedded in a URL, if any. */
  auth?: { user: string; pass: string };
}

/**
 * Parses an SMTP server setting. The error never repeats the input, since a
 * URL may carry a password.
 *
 * @example
 * ```ts
 * parseSmtpServer('smtp.example.com:587'); // { host: 'smtp.example.com', port: 587, secure: false }
 * ```
 */
export function parseSmtpServer(input: string): SmtpServerAddress {
  const text = input.trim();
  if (text.includes('://')) {
    let url: URL;
    try {
      url = new URL(text);
    } catch (error) {
      throw new ObservabilityError('invalid_config', 'smtp_server is not a valid URL', { cause: error });
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
      throw new ObservabilityError('invalid_config', `smtp_server must use smtp:// or smtps://, not ${url.protocol}//`);
    }
    if (!url.hostname) throw new ObservabilityError('invalid_config', 'smtp_server has no host');
    const secure = url.protocol === 'smtps:';
    const port = url.port ? Number(url.port) : secure ? 465 : 587;
    const address: SmtpServerAddress = { host: unbracket(url.hostname), port, secure: secure || port === 465 };
    if (url.username) address.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
    return address;
  }
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:/@]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) throw new ObservabilityError('invalid_config', 'smtp_server must be host[:port] or an smtp:// URL');
  const port = match[2] ? Number(match[2]) : 587;
  if (port < 1 || port > 65_535) throw new ObservabilityError('invalid_config', 'smtp_server port must be 1-65535');
  return { host: unbracket(match[1]!), port, secure: port === 465 };
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
