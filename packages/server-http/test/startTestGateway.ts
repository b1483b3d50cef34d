/**
 * @module startTestGateway
 * The one way gateway tests start a gateway: the YAML is written to
 * `config.yaml` in a fresh temporary directory (so reloads and the
 * management API's config routes have a file to work on), parsed, and
 * started with its logs silenced. Every gateway started here is closed, and
 * its directory removed, after the test file's tests.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { parseConfig } from '../src/gateway/config/load.js';
import { Gateway, type GatewayOptions } from '../src/gateway/gateway.js';

/** A started gateway and where its config lives. */
export interface TestGateway {
  gateway: Gateway;
  /** The gateway's base URL. */
  url: string;
  /** The temporary directory: `auth-dir: ${dir}/auths` keeps credentials in it. */
  dir: string;
  /** The config file the gateway was started from. */
  path: string;
}

const started: { gateway: Gateway; dir: string }[] = [];
after(async () => {
  for (const { gateway, dir } of started.splice(0).reverse()) {
    await gateway.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * Starts a gateway for a test. `yaml` may be a function of the temporary directory, for configs that name it.
 *
 * @example
 * ```ts
 * const { gateway, url } = await startTestGateway((dir) => `port: 0\nauth-dir: ${dir}/auths\nproviders: { a: { kind: mock, models: [m] } }\n`);
 * ```
 */
export async function startTestGateway(
  yaml: string | ((dir: string) => string),
  options: Omit<GatewayOptions, 'config' | 'configPath' | 'logDestination'> & {
    prefix?: string;
    logDestination?: GatewayOptions['logDestination'];
  } = {},
): Promise<TestGateway> {
  const { prefix = 'test-gateway-', logDestination = { write() {} }, ...rest } = options;
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const text = typeof yaml === 'function' ? yaml(dir) : yaml;
  const path = join(dir, 'config.yaml');
  await writeFile(path, text);
  let gateway: Gateway;
  try {
    gateway = await Gateway.start({ ...rest, config: parseConfig(text), configPath: path, logDestination });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  started.push({ gateway, dir });
  return { gateway, url: gateway.url, dir, path };
}
