/**
 * @module management
 * `/v0/management`: the config (the running config as redacted JSON, with
 * what waits for a restart, and the YAML itself, which a
 * PUT replaces after validation and the SSRF check of the outbound URLs it
 * adds or changes), the recent logs (or a live SSE tail), and the two
 * `quota-exceeded` toggles, which are written back to the file.
 */
import { readFile } from 'node:fs/promises';
import { createRoute, z } from '@hono/zod-openapi';
import { ApiError, bodyCap, fieldDetail, fieldDetails } from '@switchyard/http-kit';
import { streamSSE } from 'hono/streaming';
import { ConfigError, parseConfig } from '../config/load.js';
import { changedOutboundUrls, refusedOutboundUrls } from '../config/outboundUrls.js';
import { redactConfig, setInYaml, writeFileAtomically } from '../config/persist.js';
import { LOG_FOLLOW_QUEUE } from '../logTail.js';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { valueAt } from '../readAtStart.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

const TOGGLES = ['switch-project', 'switch-preview-model'] as const;
type Toggle = (typeof TOGGLES)[number];
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Validates config text against the kinds this gateway knows. */
function validate(
  gateway: Pick<GatewayParts, 'config' | 'configPath' | 'relay' | 'guardedHosts' | 'logTail' | 'bindRefusal' | 'runningConfig' | 'reload'>,
  text: string,
  source: string,
) {
  return parseConfig(text, { source, knownKinds: gateway.relay.adapterKinds() });
}

async function currentText(
  gateway: Pick<GatewayParts, 'config' | 'configPath' | 'relay' | 'guardedHosts' | 'logTail' | 'bindRefusal' | 'runningConfig' | 'reload'>,
): Promise<string | undefined> {
  if (!gateway.configPath) return undefined;
  return readFile(gateway.configPath, 'utf8');
}

/**
 * Validates `text`, writes it to the config file (when there is one) and
 * applies it. Validation failures are 422 with every bad field. Text from a
 * caller (`fromCaller`) must also add or change no outbound URL the SSRF
 * guard refuses: 403 `forbidden` naming each field, before anything is
 * written or applied, and the hosts it adds stay guarded at connect time.
 * The file on disk is the operator's and is not vetted.
 */
async function replaceConfig(
  gateway: Pick<GatewayParts, 'config' | 'configPath' | 'relay' | 'guardedHosts' | 'logTail' | 'bindRefusal' | 'runningConfig' | 'reload'>,
  text: string,
  { fromCaller, dryRun = false }: { fromCaller: boolean; dryRun?: boolean },
): Promise<{ restartNeeded: string[]; persisted: boolean }> {
  let config: ReturnType<typeof validate>;
  try {
    config = validate(gateway, text, 'request body');
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new ApiError('validation_failed', error.issues.map((i) => `${i.field}: ${i.message}`).join('; '), {
        details: fieldDetails(error.issues),
      });
    }
    throw error;
  }
  // The bind rule of the start: on a host others can reach, api-keys may not be emptied (unless --insecure).
  const unsafe = gateway.bindRefusal(config);
  if (unsafe) throw new ApiError('validation_failed', unsafe.message, { details: fieldDetail('api-keys', unsafe.message) });
  if (fromCaller) {
    // An empty key hides every management route (404): the API would lock out the caller that used it.
    if (gateway.config()['remote-management']['secret-key'] !== '' && config['remote-management']['secret-key'] === '') {
      throw new ApiError(
        'conflict',
        'the new config has no remote-management.secret-key, which would hide this API from everyone, you included; to turn remote management off, edit the config file',
        { details: fieldDetail('remote-management.secret-key', 'required when the config is replaced through the API') },
      );
    }
    const refusals = await refusedOutboundUrls(config, gateway.config(), gateway.guardedHosts.resolve);
    if (refusals.length > 0) {
      throw new ApiError('forbidden', `refused outbound URL settings: ${refusals.map((r) => r.field).join(', ')}`, { details: refusals });
    }
  }
  // A dry run stops here: every check a replacement passes, nothing recorded, written or applied.
  if (dryRun) return { restartNeeded: gateway.runningConfig(config).restartNeeded, persisted: false };
  if (fromCaller) {
    // What the caller added is held to the guard again at each connection: its names may re-resolve (DNS rebinding).
    // Recorded before the file is written, so no restart, and no node reading the file, ever takes them as the operator's.
    try {
      await gateway.guardedHosts.admit(changedOutboundUrls(config, gateway.config()));
    } catch (error) {
      throw new ApiError('service_unavailable', 'could not record the hosts this config adds, which stay guarded; nothing was written', {
        cause: error,
      });
    }
  }
  if (gateway.configPath) await writeFileAtomically(gateway.configPath, text);
  const result = gateway.reload(config, { fromFile: text, viaApi: fromCaller });
  return { restartNeeded: result.restartNeeded, persisted: gateway.configPath !== undefined };
}

/** Registers the management routes that do not concern credentials. */
export function registerManagementRoutes(
  app: ControlPlaneApp,
  gateway: Pick<GatewayParts, 'config' | 'configPath' | 'relay' | 'guardedHosts' | 'logTail' | 'bindRefusal' | 'runningConfig' | 'reload'>,
): void {
  const tags = ['management'];
  const security = [{ managementKey: [] }];

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/config',
      tags,
      security,
      summary: 'The running config, as JSON, with every secret redacted, and the changes waiting for a restart',
      responses: {
        200: jsonResponse(
          z
            .object({
              restart_needed: z
                .array(z.string())
                .openapi({ description: 'Paths read only at start whose applied value differs from the running one (`*`: every key)' }),
              pending: z
                .record(z.string(), z.unknown())
                .openapi({ description: 'Each path of `restart_needed` with the value it takes at the next restart (secrets redacted)' }),
            })
            .catchall(z.unknown()),
          'Every config key as the gateway runs it (durations in milliseconds, sizes in bytes), plus `restart_needed` and `pending`',
        ),
        ...protectedErrors,
      },
    }),
    (c) => {
      const running = gateway.runningConfig();
      // Pending values are read from the redacted config in force, so a secret waiting for a restart stays masked too.
      const inForce = redactConfig(gateway.config());
      const pending = Object.fromEntries(running.restartNeeded.map((path) => [path, valueAt(inForce, path)]));
      return c.json({ ...redactConfig(running.config), restart_needed: running.restartNeeded, pending }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/config.yaml',
      tags,
      security,
      summary: 'The config file as written (secrets included: this is the file an operator edits)',
      responses: {
        200: { description: 'The YAML text', content: { 'application/yaml': { schema: z.string() } } },
        409: jsonResponse(ErrorSchema, 'The gateway was started without a config file'),
        ...protectedErrors,
      },
    }),
    async (c) => {
      const text = await currentText(gateway);
      if (text === undefined) throw new ApiError('conflict', 'this gateway was started without a config file');
      return c.body(text, 200, { 'content-type': 'application/yaml; charset=utf-8' });
    },
  );

  // Judged by the declared length before a byte is read (and before the 100 of `Expect: 100-continue`);
  // a chunked config is cut off as soon as it grows past the cap.
  app.use('/v0/management/config.yaml', bodyCap(MAX_CONFIG_BYTES, 'the config is larger than 1 MiB'));
  app.openapi(
    createRoute({
      method: 'put',
      path: '/v0/management/config.yaml',
      tags,
      security,
      summary: 'Replace the config: validated, written atomically, applied at once (with ?dry_run=true: only validated)',
      request: {
        query: z.object({
          dry_run: z
            .enum(['true', 'false'])
            .default('false')
            .openapi({
              param: { name: 'dry_run', in: 'query' },
              description: 'true: run every check a replacement passes, and say what would need a restart; write and apply nothing',
            }),
        }),
        body: { required: true, content: { 'application/yaml': { schema: z.string() }, 'text/plain': { schema: z.string() } } },
      },
      responses: {
        ...protectedErrors,
        200: jsonResponse(
          z.object({ ok: z.literal(true), persisted: z.boolean(), restart_needed: z.array(z.string()), dry_run: z.boolean() }),
          'Applied (or, in a dry run, valid)',
        ),
        403: jsonResponse(
          ErrorSchema,
          'An outbound URL it adds or changes is refused by the SSRF guard, or it adds to `api-call-allow` (`details` names each field); or remote management is off for this client',
        ),
        409: jsonResponse(ErrorSchema, 'It has no `remote-management.secret-key`, which would hide this API'),
        413: jsonResponse(ErrorSchema, 'Larger than 1 MiB'),
        422: jsonResponse(ErrorSchema, 'Invalid: `details` lists every bad field'),
        503: jsonResponse(
          ErrorSchema,
          'The hosts it adds could not be recorded as guarded (`auth-dir/.guarded-hosts.json`, or PostgreSQL in a cluster); nothing was written',
        ),
      },
    }),
    async (c) => {
      const text = await c.req.text();
      const dryRun = c.req.valid('query').dry_run === 'true';
      const { restartNeeded, persisted } = await replaceConfig(gateway, text, { fromCaller: true, dryRun });
      return c.json({ ok: true as const, persisted, restart_needed: restartNeeded, dry_run: dryRun }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/logs',
      tags,
      security,
      summary: 'The last log lines; with follow=true, a live server-sent event stream',
      request: {
        query: z.object({
          lines: z.coerce
            .number()
            .int()
            .min(1)
            .max(5000)
            .default(100)
            .openapi({ param: { name: 'lines', in: 'query' } }),
          follow: z
            .enum(['true', 'false'])
            .default('false')
            .openapi({ param: { name: 'follow', in: 'query' } }),
        }),
      },
      responses: {
        200: {
          description:
            'JSON `{lines: [...]}`, or `text/event-stream` with one `log` event per line when following, and a `dropped` event (`{"dropped": n}`) where a slow reader missed lines',
          content: {
            'application/json': { schema: z.object({ lines: z.array(z.unknown()) }) },
            'text/event-stream': { schema: z.string() },
          },
        },
        ...protectedErrors,
      },
    }),
    (c) => {
      const { lines, follow } = c.req.valid('query');
      const parse = (line: string) => {
        try {
          return JSON.parse(line) as unknown;
        } catch {
          return line;
        }
      };
      if (follow === 'false') return c.json({ lines: gateway.logTail.last(lines).map(parse) }, 200);
      return streamSSE(c, async (stream) => {
        let id = 0;
        for (const line of gateway.logTail.last(lines)) await stream.writeSSE({ event: 'log', data: line, id: String(++id) });
        // Bounded: a reader slower than the log keeps the newest lines, and is told how many it missed.
        const queue: string[] = [];
        let dropped = 0;
        let wake: (() => void) | undefined;
        const stop = gateway.logTail.follow((line) => {
          if (queue.length >= LOG_FOLLOW_QUEUE) {
            queue.shift();
            dropped++;
          }
          queue.push(line);
          wake?.();
        });
        stream.onAbort(() => {
          stop();
          wake?.();
        });
        while (!stream.aborted && !stream.closed) {
          if (queue.length === 0) {
            // Wait for a line, or send a comment every 15 s so proxies keep the stream open.
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, 15_000).unref();
            });
            wake = undefined;
            if (queue.length === 0 && !stream.aborted) await stream.write(': keep-alive\n\n');
            continue;
          }
          if (dropped > 0) {
            const missed = dropped;
            dropped = 0;
            await stream.writeSSE({ event: 'dropped', data: JSON.stringify({ dropped: missed }), id: String(++id) });
          }
          await stream.writeSSE({ event: 'log', data: queue.shift()!, id: String(++id) });
        }
        stop();
      }) as never;
    },
  );

  for (const toggle of TOGGLES) {
    const ToggleSchema = z.object({ [toggle]: z.boolean() });
    const path = `/v0/management/quota-exceeded/${toggle}`;
    app.openapi(
      createRoute({
        method: 'get',
        path,
        tags,
        security,
        summary: `The quota-exceeded.${toggle} toggle`,
        responses: { 200: jsonResponse(ToggleSchema, 'Its value'), ...protectedErrors },
      }),
      (c) => c.json({ [toggle]: gateway.config()['quota-exceeded'][toggle] }, 200),
    );
    for (const method of ['put', 'patch'] as const) {
      app.openapi(
        createRoute({
          method,
          path,
          tags,
          security,
          summary: `Set quota-exceeded.${toggle}; written back to the config file`,
          request: { body: { required: true, content: { 'application/json': { schema: z.object({ value: z.boolean() }) } } } },
          responses: {
            200: jsonResponse(ToggleSchema, 'The toggle as it now is'),
            422: jsonResponse(ErrorSchema, '`value` is not a boolean'),
            ...protectedErrors,
          },
        }),
        async (c) => {
          const { value } = c.req.valid('json');
          await setToggle(gateway, toggle, value);
          return c.json({ [toggle]: gateway.config()['quota-exceeded'][toggle] }, 200);
        },
      );
    }
  }
}

async function setToggle(
  gateway: Pick<GatewayParts, 'config' | 'configPath' | 'relay' | 'guardedHosts' | 'logTail' | 'bindRefusal' | 'runningConfig' | 'reload'>,
  toggle: Toggle,
  value: boolean,
): Promise<void> {
  const text = await currentText(gateway);
  if (text === undefined) {
    // No file to keep it in: apply to the running config only.
    const next = structuredClone(gateway.config());
    next['quota-exceeded'][toggle] = value;
    gateway.reload(next);
    return;
  }
  // Only the toggle comes from the caller; the rest is the operator's file as it stands.
  await replaceConfig(gateway, setInYaml(text, ['quota-exceeded', toggle], value), { fromCaller: false });
}
