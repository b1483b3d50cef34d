/**
 * @module triage
 * `yard triage <text…>` (classify and add to the backlog) and
 * `yard queue add|list|show|pop`.
 */
import type { ItemType } from '@switchyard/workflow';
import { CliError } from '../errors.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { intOption, withRuntime } from './shared.js';

const ITEM_COLUMNS = ['id', 'type', 'priority', 'status', 'title', 'source', 'feature_slug', 'created_at'];

/** `yard triage <text…> [--type T] [--dry-run]`. */
export function triageCommand(ctx: CommandContext, words: string[], opts: { type?: ItemType; dryRun?: boolean }) {
  return withRuntime(ctx, async (rt) => {
    const text = words.join(' ');
    const result = await rt.backlog.triage(text, rt.classifier(), {
      ...(opts.type !== undefined ? { type: opts.type } : {}),
      dryRun: opts.dryRun === true,
    });
    const c = result.classification;
    const line = `${c.type} (confidence ${c.confidence.toFixed(2)}, priority ${c.priority}, ${c.source})`;
    emit(ctx.io, ctx.globals.output, result, {
      text: result.item ? `added backlog item #${result.item.id} as ${line}` : `would add as ${line} (dry run)`,
    });
  });
}

/** `yard queue add <title> --type T [--priority N]`. */
export function queueAdd(
  ctx: CommandContext,
  title: string,
  opts: { type: ItemType; priority: string; description?: string; feature?: string },
) {
  return withRuntime(ctx, async (rt) => {
    const item = await rt.backlog.add({
      title,
      type: opts.type,
      priority: intOption(opts.priority, '--priority', { min: 0, max: 100 })!,
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.feature !== undefined ? { feature_slug: opts.feature } : {}),
    });
    emit(ctx.io, ctx.globals.output, item, { text: `added backlog item #${item.id} (${item.type}, priority ${item.priority})` });
  });
}

/** `yard queue list [--status S] [--type T]`. */
export function queueList(ctx: CommandContext, opts: { status?: 'open' | 'in_progress' | 'done' | 'dismissed'; type?: ItemType }) {
  return withRuntime(ctx, async (rt) => {
    const items = await rt.backlog.list({ ...(opts.status ? { status: opts.status } : {}), ...(opts.type ? { type: opts.type } : {}) });
    emit(ctx.io, ctx.globals.output, items, { columns: ITEM_COLUMNS });
  });
}

/** `yard queue show <id>`. */
export function queueShow(ctx: CommandContext, id: string) {
  return withRuntime(ctx, async (rt) => {
    emit(ctx.io, ctx.globals.output, await rt.backlog.show(intOption(id, 'id', { min: 1 })!));
  });
}

/**
 * `yard queue pop`: the next open item, now in progress. An empty queue is a not-found like any
 * other (exit 3, the error on stderr, `{"error":…}` in JSON mode, nothing on stdout), so scripts
 * and agents need no second check for a `null` result.
 */
export function queuePop(ctx: CommandContext) {
  return withRuntime(ctx, async (rt) => {
    const item = await rt.backlog.pop();
    if (!item) throw new CliError('not_found', 'the queue has no open item', { what: 'open backlog item' });
    emit(ctx.io, ctx.globals.output, item, { text: `#${item.id} ${item.type} p${item.priority}: ${item.title} (now in progress)` });
  });
}
