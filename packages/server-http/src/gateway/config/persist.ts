/**
 * @module persist
 * Writing the config file back: atomically (the runtime's `writeFileAtomic`: temp file, fsync, rename, with
 * the original's mode or 0600, since it holds secrets), and for single
 * settings through the YAML document, so comments and layout survive.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { SECRET_CONFIG_PATHS } from '@switchyard/observability/config';
import { writeFileAtomic } from '@switchyard/runtime/fs';
import { parseDocument } from 'yaml';
import type { GatewayConfig } from './schema.js';

/**
 * Replaces `path` with `text` so a reader sees the old file or the new one, never a mix. The file keeps
 * the original's mode (0600 when new), or takes `options.mode` exactly.
 */
export async function writeFileAtomically(path: string, text: string, options: { mode?: number } = {}): Promise<void> {
  const mode =
    options.mode ??
    (await stat(path).then(
      (s) => s.mode & 0o777,
      () => 0o600,
    ));
  // The umask may have narrowed `mode`; a mode asked for is set exactly.
  await writeFileAtomic(dirname(path), basename(path), text, { mode, exactMode: options.mode !== undefined });
}

/** The config text with one setting changed, comments and formatting kept. */
export function setInYaml(text: string, path: readonly string[], value: unknown): string {
  const document = parseDocument(text);
  document.setIn(path, value);
  return document.toString();
}

const MASK = '***';
const mask = (value: unknown) => (typeof value === 'string' && value.length > 0 ? MASK : value);

function maskPath(target: Record<string, unknown>, path: readonly string[]): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) {
    if (!node || typeof node !== 'object') return;
    node = (node as Record<string, unknown>)[key];
  }
  const last = path[path.length - 1]!;
  if (!node || typeof node !== 'object' || !(last in node)) return;
  const holder = node as Record<string, unknown>;
  const value = holder[last];
  if (Array.isArray(value)) holder[last] = value.map(mask);
  else holder[last] = value && typeof value === 'object' ? Object.fromEntries(Object.keys(value).map((k) => [k, MASK])) : mask(value);
}

/** The config for display: every secret replaced by `***` (empty ones stay empty, so "unset" shows). */
export function redactConfig(config: GatewayConfig): Record<string, unknown> {
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  // A named key keeps its name and role on display; the key itself never shows.
  copy['api-keys'] = (config['api-keys'] ?? []).map((entry) => (typeof entry === 'string' ? MASK : { ...entry, key: MASK }));
  maskPath(copy, ['remote-management', 'secret-key']);
  maskPath(copy, ['auth', 'encryption', 'key']);
  // Keys kept readable during a rekey decrypt the same credentials as the current one.
  maskPath(copy, ['auth', 'encryption', 'previous_keys']);
  maskPath(copy, ['cluster', 'database_url']);
  for (const path of SECRET_CONFIG_PATHS) maskPath(copy, path.split('.'));
  for (const provider of Object.values((copy.providers ?? {}) as Record<string, Record<string, unknown>>)) {
    maskPath(provider, ['headers']);
    maskPath(provider, ['oauth', 'client_secret']);
  }
  return copy;
}
