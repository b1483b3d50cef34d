/**
 * @module backlogQueue
 * The backlog: items with a type, a priority and a status. `pop` takes the
 * highest-priority open item (oldest first among equals) and marks it
 * `in_progress` in one transaction, so two workers never take the same item.
 */
import { z } from 'zod';
import { parseInput } from '../domain/inputs.js';
import { BACKLOG_STATUSES, type BacklogItem, type BacklogStatus, ITEM_TYPES, type ItemType } from '../domain/records.js';
import { NotFoundError } from '../errors.js';
import type { WorkflowStore } from '../store/workflowStore.js';
import { type Clock, isoNow, systemClock } from '../util/clock.js';
import type { Classification, Classifier } from './classifier.js';

export const addBacklogItemInput = z.object({
  title: z.string().trim().min(1).max(200),
  description: z.string().max(100_000).default(''),
  type: z.enum(ITEM_TYPES),
  priority: z.number().int().min(0).max(100),
  confidence: z.number().min(0).max(1).default(1),
  source: z.enum(['heuristic', 'llm', 'manual']).default('manual'),
  feature_slug: z.string().nullable().default(null),
});
export type AddBacklogItemInput = z.input<typeof addBacklogItemInput>;

/** Queue order: priority descending, then oldest, then id. */
export function queueOrder(a: BacklogItem, b: BacklogItem): number {
  return b.priority - a.priority || a.created_at.localeCompare(b.created_at) || a.id - b.id;
}

/** The outcome of {@link BacklogQueue.triage}. */
export interface TriageResult {
  classification: Classification;
  /** The stored item, or null on a dry run. */
  item: BacklogItem | null;
}

/**
 * The backlog over a store.
 *
 * @example
 * ```ts
 * const backlog = new BacklogQueue(store);
 * await backlog.triage('Login crashes on Safari', classifier);
 * const next = await backlog.pop(); // highest priority, oldest first
 * ```
 */
export class BacklogQueue {
  constructor(
    private readonly store: WorkflowStore,
    private readonly clock: Clock = systemClock,
  ) {}

  async add(input: AddBacklogItemInput): Promise<BacklogItem> {
    const data = parseInput(addBacklogItemInput, input);
    const now = isoNow(this.clock);
    return this.store.transact((tx) => tx.insertBacklogItem({ ...data, status: 'open', created_at: now, updated_at: now }));
  }

  /**
   * Classifies free text and adds it (unless `dryRun`). `type` overrides
   * the classifier's type; the title is the text's first line.
   */
  async triage(
    text: string,
    classifier: Classifier,
    options: { type?: ItemType; dryRun?: boolean; featureSlug?: string } = {},
  ): Promise<TriageResult> {
    const classification = await classifier.classify(text);
    if (options.type !== undefined) {
      parseInput(z.enum(ITEM_TYPES), options.type, 'type');
      classification.type = options.type;
    }
    if (options.dryRun) return { classification, item: null };
    const [first = '', ...rest] = text.trim().split('\n');
    const title = first.length > 200 ? `${first.slice(0, 197)}...` : first;
    const item = await this.add({
      title,
      description: first.length > 200 ? text.trim() : rest.join('\n').trim(),
      type: classification.type,
      priority: classification.priority,
      confidence: classification.confidence,
      source: options.type !== undefined ? 'manual' : classification.source,
      feature_slug: options.featureSlug ?? null,
    });
    return { classification, item };
  }

  /** Items in queue order, optionally by status and type. */
  async list(filter: { status?: BacklogStatus; type?: ItemType } = {}): Promise<BacklogItem[]> {
    if (filter.status !== undefined) parseInput(z.enum(BACKLOG_STATUSES), filter.status, 'status');
    if (filter.type !== undefined) parseInput(z.enum(ITEM_TYPES), filter.type, 'type');
    return (await this.store.reader.listBacklog(filter)).sort(queueOrder);
  }

  async show(id: number): Promise<BacklogItem> {
    const item = await this.store.reader.getBacklogItem(id);
    if (!item) throw new NotFoundError('backlog item', id);
    return item;
  }

  /** Takes the next open item (highest priority, then oldest) and marks it in progress; null when none is open. */
  async pop(): Promise<BacklogItem | null> {
    return this.store.transact(async (tx) => {
      await tx.lock('_backlog');
      const [next] = (await tx.listBacklog({ status: 'open' })).sort(queueOrder);
      if (!next) return null;
      return tx.updateBacklogItem(next.id, { status: 'in_progress', updated_at: isoNow(this.clock) });
    });
  }

  async setStatus(id: number, status: BacklogStatus): Promise<BacklogItem> {
    parseInput(z.enum(BACKLOG_STATUSES), status, 'status');
    await this.show(id);
    return this.store.transact((tx) => tx.updateBacklogItem(id, { status, updated_at: isoNow(this.clock) }));
  }
}
