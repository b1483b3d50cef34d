/**
 * The gateway the client-keys benchmark measures, one per process:
 *   server.ts <auth-dir>
 * The whole gateway (`Gateway.start`) on a mock provider, with ten static `api-keys` and whatever
 * `<auth-dir>/.client-keys.json` holds (the benchmark writes 10,000 keys there for one of the two
 * processes, none for the other), metrics off and the log at `warn`, so what differs between the
 * two processes is the key check. Prints `READY <port>` on stdout when it listens.
 */
import { Gateway, parseConfig } from '@switchyard/server-http';

const [authDir] = process.argv.slice(2);
const STATIC_KEYS = Array.from({ length: 10 }, (_, i) => `sk-static-bench-${i}`);
const config = parseConfig(
  JSON.stringify({
    port: 0,
    'auth-dir': authDir,
    'api-keys': STATIC_KEYS,
    providers: { mock: { kind: 'mock', models: ['bench-model', 'other-*'] } },
    metrics: { enabled: false },
    logging: { level: 'warn' },
  }),
);
const gateway = await Gateway.start({ config });
process.stdout.write(`READY ${new URL(gateway.url).port}\n`);
process.on('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
