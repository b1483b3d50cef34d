/**
 * @module configFile
 * The gateway's config file while it runs: edits are applied as they
 * settle, a bad edit is logged and the running config kept, and a text
 * already applied (the gateway's own writes, or a file another node's
 * signal made us read again) is not applied twice.
 */
import { readFile } from 'node:fs/promises';
import { type FileWatch, watchFile } from '@switchyard/credentials';
import { ConfigError, parseConfig } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';

/** Options of {@link ConfigFile}. */
export interface ConfigFileOptions {
  path: string;
  /** Provider kinds the relay has adapters for: a config naming another is refused. */
  knownKinds: () => readonly string[];
  /** Applies a config read from the file (`Gateway.reload`). `announce` is false when another node's signal prompted the read. */
  apply: (config: GatewayConfig, options: { fromFile: string; announce: boolean }) => void;
  logError: (fields: Record<string, unknown>, message: string) => void;
}

/**
 * Watches and applies a gateway's config file.
 *
 * @example
 * ```ts
 * const file = new ConfigFile({ path, knownKinds: () => relay.adapterKinds(), apply: (c, o) => gateway.reload(c, o), logError });
 * await file.watch();
 * ```
 */
export class ConfigFile {
  /** The file text last applied (or refused), so reading it again changes nothing. */
  private lastText: string | undefined;
  private watcher: FileWatch | undefined;

  constructor(private readonly options: ConfigFileOptions) {}

  /** Notes `text` as applied: a config written to the file and applied at once is not reloaded when the watch sees it. */
  applied(text: string): void {
    this.lastText = text;
  }

  /** Applies edits of the file as they happen. */
  async watch(): Promise<void> {
    this.lastText = await readFile(this.options.path, 'utf8').catch(() => undefined);
    // Edits come in bursts; the watch reports once they settle (a text already applied is skipped).
    this.watcher = watchFile(this.options.path, () => void this.applyIfChanged({ signalled: false }));
    await this.watcher.ready;
  }

  /**
   * Reads the file and applies it when it changed. A change this node
   * found itself is announced to the cluster; one looked for because
   * another node signalled is not, so signals never echo between nodes.
   */
  async applyIfChanged(options: { signalled: boolean }): Promise<void> {
    const { path } = this.options;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return; // mid-replace; the next event brings the new file
    }
    if (text === this.lastText) return;
    try {
      const config = parseConfig(text, { source: path, knownKinds: this.options.knownKinds() });
      this.options.apply(config, { fromFile: text, announce: !options.signalled });
    } catch (error) {
      this.lastText = text;
      const issues = error instanceof ConfigError ? error.issues : [{ field: '(file)', message: (error as Error).message }];
      this.options.logError({ path, issues }, 'config_reload_rejected_keeping_running_config');
    }
  }

  /** Stops watching. */
  async close(): Promise<void> {
    await this.watcher?.close();
  }
}
