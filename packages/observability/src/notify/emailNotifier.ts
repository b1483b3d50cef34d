/**
 * @module emailNotifier
 * E-mail over SMTP with nodemailer. nodemailer is an optional peer loaded
 * on the first send, so a process that never mails never loads it.
 * nodemailer resolves the server's name itself (`dns.resolve4`/`resolve6`,
 * cached process-wide) and connects by IP, out of reach of any `lookup`
 * option; a caller that must vet the addresses at connect time (the gateway's
 * DNS-rebinding guard) passes `lookup`, and the connection is then opened
 * here with it and handed to nodemailer as an already open socket.
 */
import type { lookup as dnsLookup } from 'node:dns';
import { connect, type Socket } from 'node:net';
import { NotificationFailed, ObservabilityError } from '../errors.js';
import { type Notification, type Notifier, renderNotification } from './notification.js';
import { parseSmtpServer, type SmtpServerAddress } from './smtpServer.js';

/** Options of {@link EmailNotifier}. */
export interface EmailOptions {
  /** `host[:port]` or `smtp(s)://[user:pass@]host[:port]`. */
  smtpServer: string;
  from: string;
  to: readonly string[];
  username?: string;
  password?: string;
  /** Refuse to send without TLS (default: STARTTLS when offered). */
  requireTls?: boolean;
  /** Accept an SMTP server's self-signed certificate (tests, private relays). */
  allowInvalidCertificates?: boolean;
  /** Time limits of the SMTP conversation (ms, default 10 s each). */
  timeoutMs?: number;
  /**
   * The lookup each connection to the SMTP server resolves its host with (`dns.lookup`'s shape), run at
   * connect time: an error it gives fails the send before a byte is sent. Default: nodemailer's own resolver.
   */
  lookup?: typeof dnsLookup;
}

type Transport = { sendMail(message: Record<string, unknown>): Promise<unknown>; close(): void };

/** nodemailer's `getSocket` hook: how a transport obtains each connection instead of opening it itself. */
type GetSocket = (
  options: { host?: string; port?: number },
  callback: (error: Error | null, socket?: { connection: Socket }) => void,
) => void;

/**
 * A `getSocket` that opens each connection with `lookup`. nodemailer takes the socket as a proxy's: it
 * speaks SMTP on it, upgrades it to TLS (`secure`, STARTTLS) with the host name as SNI, and closes it.
 */
function connectingWith(lookup: typeof dnsLookup, timeoutMs: number): GetSocket {
  return ({ host, port }, callback) => {
    const socket = connect({ host: host ?? 'localhost', port: port ?? 587, lookup });
    // nodemailer's connectionTimeout starts once it holds the socket, so the connect itself is timed here.
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
    const failed = (error: Error) => {
      clearTimeout(timer);
      callback(error);
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', failed);
      callback(null, { connection: socket });
    });
  };
}

/**
 * The plain-text e-mail of a notification.
 *
 * @example
 * ```ts
 * emailMessage(notification).subject; // '[FIRING] high_latency (warning)'
 * ```
 */
export function emailMessage(notification: Notification): { subject: string; text: string } {
  const rendered = renderNotification(notification);
  const width = Math.max(...rendered.fields.map(([name]) => name.length));
  const lines = rendered.fields.map(([name, value]) => `${name.padEnd(width)}  ${value}`);
  return { subject: rendered.title, text: `${rendered.text}\n\n${lines.join('\n')}\n\n— switchyard\n` };
}

const RETRYABLE_SMTP = /^(ECONNECTION|ETIMEDOUT|ESOCKET|EDNS|ECONNREFUSED|ECONNRESET)$/;

/**
 * Sends notifications as e-mail.
 *
 * @example
 * ```ts
 * const email = new EmailNotifier({ smtpServer: 'smtp.example.com:587', from: 'gw@example.com', to: ['oncall@example.com'] });
 * ```
 */
export class EmailNotifier implements Notifier {
  readonly channel = 'email' as const;
  private readonly address: SmtpServerAddress;
  private transport: Promise<Transport> | undefined;

  constructor(private readonly options: EmailOptions) {
    this.address = parseSmtpServer(options.smtpServer);
    if (options.to.length === 0) throw new ObservabilityError('invalid_argument', 'email needs at least one recipient');
  }

  async send(notification: Notification, signal: AbortSignal): Promise<void> {
    const transport = await this.transportOnce();
    const { subject, text } = emailMessage(notification);
    const sending = transport.sendMail({ from: this.options.from, to: [...this.options.to], subject, text });
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => reject(new NotificationFailed('email', 'timed out', { retryable: true }));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([sending, aborted]);
    } catch (error) {
      if (error instanceof NotificationFailed) throw error;
      const e = error as { code?: string; responseCode?: number };
      // 4xx SMTP replies are transient by definition (RFC 5321 §4.2.1); 5xx are permanent.
      const retryable = (e.code !== undefined && RETRYABLE_SMTP.test(e.code)) || (e.responseCode !== undefined && e.responseCode < 500);
      const detail = e.responseCode ? `SMTP ${e.responseCode}` : (e.code ?? 'send failed');
      throw new NotificationFailed('email', detail, { retryable, status: e.responseCode ?? null, cause: error });
    }
  }

  async close(): Promise<void> {
    const transport = this.transport;
    this.transport = undefined;
    if (transport) (await transport.catch(() => undefined))?.close();
  }

  private transportOnce(): Promise<Transport> {
    this.transport ??= this.createTransport();
    return this.transport;
  }

  private async createTransport(): Promise<Transport> {
    let nodemailer: { createTransport(options: Record<string, unknown>): Transport };
    try {
      const loaded = (await import('nodemailer')) as unknown as { default?: typeof nodemailer } & typeof nodemailer;
      nodemailer = loaded.default ?? loaded;
    } catch (error) {
      this.transport = undefined;
      throw new ObservabilityError('missing_dependency', 'e-mail notifications need nodemailer: pnpm add nodemailer', { cause: error });
    }
    const user = this.options.username ?? this.address.auth?.user;
    const pass = this.options.password ?? this.address.auth?.pass;
    const timeout = this.options.timeoutMs ?? 10_000;
    return nodemailer.createTransport({
      host: this.address.host,
      port: this.address.port,
      secure: this.address.secure,
      requireTLS: this.options.requireTls ?? false,
      ...(user ? { auth: { user, pass: pass ?? '' } } : {}),
      ...(this.options.allowInvalidCertificates ? { tls: { rejectUnauthorized: false } } : {}),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      ...(this.options.lookup ? { getSocket: connectingWith(this.options.lookup, timeout) } : {}),
      // Never write SMTP conversations (which carry AUTH) to the log.
      logger: false,
      debug: false,
    });
  }
}
