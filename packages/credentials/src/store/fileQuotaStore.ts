/**
 * @module fileQuotaStore
 * The file adapter of the `QuotaStore` port: usage in one JSON file,
 * rewritten atomically, for one process.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { CredentialsError } from '../errors.js';
import { MemoryQuotaStore } from './quotaStore.js';
import { writeFileAtomic } from './safeFiles.js';

/**
 * Quota usage in one JSON file (by default `.quota.json` in the auth
 * directory, which the credential watcher ignores), rewritten atomically
 * after each batch. For one process at a time.
 *
 * @example
 * ```ts
 * const quotas = await FileQuotaStore.open('./auths/.quota.json');
 * ```
 */
export class FileQuotaStore extends MemoryQuotaStore {
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  private constructor(private readonly path: string) {
    super();
  }

  /** Opens the file (or starts empty when it does not exist). */
  static async open(path: string): Promise<FileQuotaStore> {
    const store = new FileQuotaStore(resolve(path));
    let text: string | undefined;
    try {
      text = await readFile(store.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new CredentialsError('store_failed', `cannot read ${store.path}`, { cause: error });
      }
    }
    if (text !== undefined) store.restore(text);
    return store;
  }

  private restore(text: string): void {
    let parsed: { usage?: Record<string, { used?: unknown; period_start?: unknown }> };
    try {
      parsed = JSON.parse(text);
    } catch (cause) {
      throw new CredentialsError('store_failed', `${this.path} is not valid JSON; move it away to start counting from zero`, { cause });
    }
    for (const [id, usage] of Object.entries(parsed.usage ?? {})) {
      const used = Number.isSafeInteger(usage.used) && (usage.used as number) >= 0 ? (usage.used as number) : 0;
      const period = typeof usage.period_start === 'string' ? usage.period_start : null;
      this.usage.set(id, { used, period_start: period });
    }
  }

  protected override async persist(): Promise<void> {
    // Coalesce: one write in flight, and at most one more that carries every change made meanwhile.
    this.dirty = true;
    const next = this.writing.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      const body = { format_version: 1, usage: Object.fromEntries([...this.usage].sort(([a], [b]) => (a < b ? -1 : 1))) };
      await writeFileAtomic(dirname(this.path), basename(this.path), `${JSON.stringify(body, null, 2)}\n`);
    });
    this.writing = next.catch(() => undefined);
    await next;
  }

  override async close(): Promise<void> {
    await this.writing;
  }
}
