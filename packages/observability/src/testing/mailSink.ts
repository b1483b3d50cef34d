/**
 * @module mailSink
 * A local SMTP sink on 127.0.0.1 (smtp-server), for e-mail delivery tests.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  user: string | undefined;
}

export interface MailSink {
  port: number;
  mails: ReceivedMail[];
  /** Reply codes to answer DATA with, in order (then 250). */
  failures: number[];
  close(): Promise<void>;
}

export async function startMailSink(options: { auth?: { user: string; pass: string } } = {}): Promise<MailSink> {
  const mails: ReceivedMail[] = [];
  const failures: number[] = [];
  const server = new SMTPServer({
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass)
        return callback(null, { user: auth.username });
      return callback(new Error('invalid credentials'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const code = failures.shift();
        if (code !== undefined) {
          const error = new Error(`rejected with ${code}`) as Error & { responseCode: number };
          error.responseCode = code;
          return callback(error);
        }
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: session.user as string | undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, failures, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
