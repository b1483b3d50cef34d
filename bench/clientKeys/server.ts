/**
 * The gateway the client-keys benchmark measures, one per process:
 *   server.ts <auth-dir> <static-key-count>
 * The whole gateway (`Gateway.start`) on a mock provider, with `<static-key-count>` static `api-keys`
 * (`sk-static-bench-0`, `-1`, …; none when 0) and whatever `<auth-dir>/.client-keys.json` holds (the
 * benchmark writes 10,000 keys there for the client-keys process, none for the static ones), metrics off
 * and the log at `warn`, so what differs between the processes is the key check. Prints `READY <port>`
 * on stdout when it listens.
 */
import { Gateway, parseConfig } from '@switchyard/server-http';

const [authDir, staticKeyCount = '10'] = process.argv.slice(2);
const STATIC_KEYS = Array.from({ length: Number(staticKeyCount) }, (_, i) => `sk-static-bench-${i}`);
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
