/**
 * @module configFile
 * The gateway's config file while it runs: edits are applied as they
 * settle, a bad edit is logged and the running config kept, and a text
 * already applied (the gateway's own writes, or a file another node's
 * signal made us read again) is not applied twice. Reads are applied one at
 * a time, in order, so a slow one never lands after a newer text.
 */
import { readFile } from 'node:fs/promises';
import { type FileWatch, watchFile } from '@switchyard/credentials';
import { UnsafeBindError } from '@switchyard/http-kit';
import { ConfigError, parseConfig } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';

/** Options of {@link ConfigFile}. */
export interface ConfigFileOptions {
  path: string;
  /** Provider kinds the relay has adapters for: a config naming another is refused. */
  knownKinds: () => readonly string[];
  /** Applies a config read from the file (`Gateway.reload`). `announce` is false when another node's signal prompted the read. */
  apply: (config: GatewayConfig, options: { fromFile: string; announce: boolean }) => void;
  /**
   * Runs before a changed text is applied (a cluster node learns the hosts other nodes' APIs admitted). When it
   * fails the running config is kept, and the text is tried again at the next change or signal.
   */
  beforeApply?: (config: GatewayConfig) => Promise<void>;
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
  /**
   * Counts the texts this process wrote and applied itself. A read that began before one of them
   * may return the older text, and must not undo the newer one.
   */
  private ownWrites = 0;
  /** True while a text read from the file is being applied: its own `applied` call is not a newer write. */
  private applyingRead = false;
  private watcher: FileWatch | undefined;
  /** The read being applied: the next waits for it. */
  private applying: Promise<void> = Promise.resolve();

  constructor(private readonly options: ConfigFileOptions) {}

  /** Notes `text` as applied: a config written to the file and applied at once is not reloaded when the watch sees it. */
  applied(text: string): void {
    this.lastText = text;
    if (!this.applyingRead) this.ownWrites += 1;
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
  applyIfChanged(options: { signalled: boolean }): Promise<void> {
    // Counted when the change is reported: a text this process writes after that is newer than the change.
    const ownWritesBefore = this.ownWrites;
    this.applying = this.applying.then(() => this.readAndApply(options, ownWritesBefore));
    return this.applying;
  }

  /** True when this process wrote and applied a text since `ownWritesBefore` was counted. */
  private overtaken(ownWritesBefore: number): boolean {
    return this.ownWrites !== ownWritesBefore;
  }

  private async readAndApply(options: { signalled: boolean }, ownWritesBefore: number): Promise<void> {
    const { path } = this.options;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return; // mid-replace; the next event brings the new file
    }
    // The management API wrote and applied a newer text while this read was queued or in flight: the text read
    // may be the older one, and applying it would undo the newer (the file holds the newer text; a later edit
    // brings its own event).
    if (this.overtaken(ownWritesBefore) || text === this.lastText) return;
    let config: GatewayConfig;
    try {
      config = parseConfig(text, { source: path, knownKinds: this.options.knownKinds() });
    } catch (error) {
      this.refused(text, error);
      return;
    }
    if (this.options.beforeApply) {
      try {
        await this.options.beforeApply(config);
      } catch (error) {
        this.options.logError({ path, err: (error as Error).message }, 'config_reload_deferred_keeping_running_config');
        return;
      }
      // The management API wrote and applied a newer text meanwhile: this one is stale.
      if (this.overtaken(ownWritesBefore)) return;
    }
    this.applyingRead = true;
    try {
      this.options.apply(config, { fromFile: text, announce: !options.signalled });
    } catch (error) {
      this.refused(text, error);
    } finally {
      this.applyingRead = false;
    }
  }

  private refused(text: string, error: unknown): void {
    this.lastText = text;
    const issues =
      error instanceof ConfigError
        ? error.issues
        : [{ field: error instanceof UnsafeBindError ? 'api-keys' : '(file)', message: (error as Error).message }];
    this.options.logError({ path: this.options.path, issues }, 'config_reload_rejected_keeping_running_config');
  }

  /** Stops watching. */
  async close(): Promise<void> {
    await this.watcher?.close();
  }
}
