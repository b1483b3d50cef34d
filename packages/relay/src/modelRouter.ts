/**
 * @module modelRouter
 * Which providers serve a model. A provider serves a model when the name is
 * one of its aliases (the alias says what to send upstream), one of its
 * model names, or matches one of its globs (`gpt-4o*`, `claude-?-*`). Every
 * matching provider is a candidate; the strategy chooses among them.
 */
import { Glob } from '@switchyard/translate';
import type { ProviderConfig } from './types.js';

/** A provider able to serve a model, and the name to send it. */
export interface RouteTarget {
  provider: string;
  upstreamModel: string;
}

/** A model as listed by `GET /v1/models`. */
export interface ModelListing {
  id: string;
  /** Providers serving it, in configuration order. */
  providers: string[];
}

const GLOB_CHARS = /[*?]/;

interface CompiledProvider {
  name: string;
  exact: Set<string>;
  globs: Glob[];
  aliases: Map<string, string>;
}

const CACHE_LIMIT = 1024;

/**
 * Routes model names to providers.
 *
 * @example
 * ```ts
 * const router = new ModelRouter([{ name: 'openai', kind: 'openai', models: ['gpt-4o*'], aliases: { fast: 'gpt-4o-mini' } }]);
 * router.route('fast'); // [{ provider: 'openai', upstreamModel: 'gpt-4o-mini' }]
 * ```
 */
export class ModelRouter {
  private readonly compiled: CompiledProvider[];
  // Model names come from clients, so the cache is bounded, and holds served names only; unknown names cost one scan each.
  private readonly cache = new Map<string, RouteTarget[]>();

  constructor(providers: readonly ProviderConfig[]) {
    this.compiled = providers
      .filter((p) => p.enabled !== false)
      .map((p) => ({
        name: p.name,
        exact: new Set((p.models ?? []).filter((m) => !GLOB_CHARS.test(m))),
        globs: (p.models ?? []).filter((m) => GLOB_CHARS.test(m)).map((glob) => new Glob(glob)),
        aliases: new Map(Object.entries(p.aliases ?? {})),
      }));
  }

  /** Names now cached (for tests of what fills the cache). */
  get cachedNames(): number {
    return this.cache.size;
  }

  /** Providers serving `model`, in configuration order; empty when none does. */
  route(model: string): RouteTarget[] {
    const cached = this.cache.get(model);
    if (cached) return cached;
    const targets: RouteTarget[] = [];
    for (const p of this.compiled) {
      const alias = p.aliases.get(model);
      if (alias !== undefined) targets.push({ provider: p.name, upstreamModel: alias });
      else if (p.exact.has(model) || p.globs.some((glob) => glob.test(model))) targets.push({ provider: p.name, upstreamModel: model });
    }
    // Only served names are cached: unknown names, which any client can make up, would fill it.
    if (targets.length === 0) return targets;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(model, targets);
    return targets;
  }

  /** The union of every provider's model names and aliases (globs are patterns, not models, and are left out). */
  models(): ModelListing[] {
    const byId = new Map<string, string[]>();
    for (const p of this.compiled) {
      for (const id of [...p.exact, ...p.aliases.keys()]) {
        const list = byId.get(id) ?? [];
        if (!list.includes(p.name)) list.push(p.name);
        byId.set(id, list);
      }
    }
    return [...byId].map(([id, providers]) => ({ id, providers })).sort((a, b) => a.id.localeCompare(b.id));
  }
}
