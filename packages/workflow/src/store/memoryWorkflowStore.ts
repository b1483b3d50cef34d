/**
 * @module memoryWorkflowStore
 * The in-memory `WorkflowStore`, for tests and embedders. Transactions run
 * one at a time and keep an undo log, so a failed transaction leaves no
 * trace, exactly like the SQL adapters.
 */
import type { AuditEntry, AuditStore, ChainHead, EntryBuilder, SealedEntry } from '@switchyard/audit-chain';
import type { Contract, Evidence, Feature, FeatureState, GovernanceRule, Metric, WorkPackage } from '../domain/model.js';
import type { AgentJob, BacklogItem, BacklogStatus, ItemType, SyncLink } from '../domain/records.js';
import { NotFoundError, WorkflowError } from '../errors.js';
import type { AgentEvent, AgentEventFilter, StoredAgentEvent } from '../events.js';
import { Mutex } from '../util/mutex.js';
import { assertChainName, assertContinuesHead } from './chainCheck.js';
import type { EvidenceFilter, WorkflowReader, WorkflowStore, WorkflowTx } from './workflowStore.js';

interface State {
  features: Map<number, Feature>;
  workPackages: Map<number, WorkPackage>;
  evidence: Map<number, Evidence>;
  metrics: Map<number, Metric>;
  rules: Map<string, GovernanceRule>;
  contracts: Map<number, Contract>;
  backlog: Map<number, BacklogItem>;
  jobs: Map<string, AgentJob>;
  agentEvents: Map<number, StoredAgentEvent>;
  syncLinks: Map<string, SyncLink>;
  /** Delivery id to when it was received. */
  deliveries: Map<string, string>;
  chains: Map<string, SealedEntry[]>;
  nextId: number;
}

const copy = <T>(value: T): T => structuredClone(value);

class MemoryReader implements WorkflowReader {
  constructor(protected readonly s: State) {}

  async getFeature(slug: string) {
    for (const f of this.s.features.values()) if (f.slug === slug) return copy(f);
    return undefined;
  }
  async getFeatureById(id: number) {
    const f = this.s.features.get(id);
    return f && copy(f);
  }
  async listFeatures(filter: { state?: FeatureState } = {}) {
    return [...this.s.features.values()].filter((f) => !filter.state || f.state === filter.state).map(copy);
  }
  async getWorkPackage(featureId: number, sequence: number) {
    for (const wp of this.s.workPackages.values()) if (wp.feature_id === featureId && wp.sequence === sequence) return copy(wp);
    return undefined;
  }
  async listWorkPackages(featureId: number) {
    return [...this.s.workPackages.values()]
      .filter((w) => w.feature_id === featureId)
      .sort((a, b) => a.sequence - b.sequence)
      .map(copy);
  }
  async listEvidence(filter: EvidenceFilter) {
    return [...this.s.evidence.values()]
      .filter((e) => e.feature_id === filter.featureId && (filter.wpId === undefined || e.wp_id === filter.wpId))
      .map(copy);
  }
  async getEvidence(id: number) {
    const e = this.s.evidence.get(id);
    return e && copy(e);
  }
  async listMetrics(featureId: number, wpId?: number | null) {
    return [...this.s.metrics.values()].filter((m) => m.feature_id === featureId && (wpId === undefined || m.wp_id === wpId)).map(copy);
  }
  async listRules() {
    return [...this.s.rules.values()].sort((a, b) => a.rule_id.localeCompare(b.rule_id)).map(copy);
  }
  async getRule(ruleId: string) {
    const r = this.s.rules.get(ruleId);
    return r && copy(r);
  }
  async auditEntries(chain: string) {
    assertChainName(chain);
    return (this.s.chains.get(chain) ?? []).map((sealed) => copy(sealed.entry) as AuditEntry);
  }
  async listContracts(featureId: number, name?: string) {
    return [...this.s.contracts.values()]
      .filter((c) => c.feature_id === featureId && (name === undefined || c.name === name))
      .sort((a, b) => a.name.localeCompare(b.name) || a.version - b.version)
      .map(copy);
  }
  async getBacklogItem(id: number) {
    const i = this.s.backlog.get(id);
    return i && copy(i);
  }
  async listBacklog(filter: { status?: BacklogStatus; type?: ItemType } = {}) {
    return [...this.s.backlog.values()]
      .filter((i) => (!filter.status || i.status === filter.status) && (!filter.type || i.type === filter.type))
      .map(copy);
  }
  async getJob(id: string) {
    const j = this.s.jobs.get(id);
    return j && copy(j);
  }
  async listJobs(filter: { featureSlug?: string; state?: AgentJob['state'] } = {}) {
    return [...this.s.jobs.values()]
      .filter((j) => (!filter.featureSlug || j.feature_slug === filter.featureSlug) && (!filter.state || j.state === filter.state))
      .sort((a, b) => a.created_at.localeCompare(b.created_at))
      .map(copy);
  }
  async listAgentEvents(filter: AgentEventFilter = {}) {
    const matching = [...this.s.agentEvents.values()].filter(
      (e) =>
        e.id > (filter.afterId ?? 0) &&
        (!filter.jobId || e.jobId === filter.jobId) &&
        (!filter.featureSlug || e.featureSlug === filter.featureSlug),
    );
    return matching.slice(0, filter.limit ?? matching.length).map(copy);
  }
  async getSyncLink(system: SyncLink['system'], localKey: string) {
    const l = this.s.syncLinks.get(`${system}\0${localKey}`);
    return l && copy(l);
  }
  async listSyncLinks(system?: SyncLink['system']) {
    return [...this.s.syncLinks.values()].filter((l) => !system || l.system === system).map(copy);
  }
}

class MemoryTx extends MemoryReader implements WorkflowTx {
  readonly undo: (() => void)[] = [];

  private setIn<K, V>(map: Map<K, V>, key: K, value: V): void {
    const had = map.has(key);
    const old = map.get(key);
    map.set(key, value);
    this.undo.push(() => (had ? map.set(key, old as V) : map.delete(key)));
  }
  private nextId(): number {
    const id = this.s.nextId++;
    this.undo.push(() => {
      this.s.nextId = id;
    });
    return id;
  }
  private unique<T>(values: Iterable<T>, clash: (v: T) => boolean, message: string): void {
    for (const v of values) if (clash(v)) throw new WorkflowError('already_exists', message);
  }

  async lock(): Promise<void> {}

  async insertFeature(f: Omit<Feature, 'id'>) {
    this.unique(this.s.features.values(), (x) => x.slug === f.slug, `feature ${JSON.stringify(f.slug)} already exists`);
    const row = { ...copy(f), id: this.nextId() };
    this.setIn(this.s.features, row.id, row);
    return copy(row);
  }
  async updateFeature(id: number, patch: Partial<Feature>) {
    const old = this.s.features.get(id);
    if (!old) throw new NotFoundError('feature', id);
    const row = { ...old, ...copy(patch), id };
    this.setIn(this.s.features, id, row);
    return copy(row);
  }
  async insertWorkPackage(wp: Omit<WorkPackage, 'id'>) {
    this.unique(
      this.s.workPackages.values(),
      (x) => x.feature_id === wp.feature_id && x.sequence === wp.sequence,
      `work package ${wp.sequence} already exists`,
    );
    const row = { ...copy(wp), id: this.nextId() };
    this.setIn(this.s.workPackages, row.id, row);
    return copy(row);
  }
  async updateWorkPackage(id: number, patch: Partial<WorkPackage>) {
    const old = this.s.workPackages.get(id);
    if (!old) throw new NotFoundError('work package', id);
    const row = { ...old, ...copy(patch), id };
    this.setIn(this.s.workPackages, id, row);
    return copy(row);
  }
  async insertEvidence(e: Omit<Evidence, 'id'>) {
    const row = { ...copy(e), id: this.nextId() };
    this.setIn(this.s.evidence, row.id, row);
    return copy(row);
  }
  async insertMetric(m: Omit<Metric, 'id'>) {
    const row = { ...copy(m), id: this.nextId() };
    this.setIn(this.s.metrics, row.id, row);
    return copy(row);
  }
  async putRule(rule: GovernanceRule) {
    this.setIn(this.s.rules, rule.rule_id, copy(rule));
  }
  async seedRule(rule: GovernanceRule) {
    if (!this.s.rules.has(rule.rule_id)) this.setIn(this.s.rules, rule.rule_id, copy(rule));
  }
  async insertContract(c: Omit<Contract, 'id'>) {
    this.unique(
      this.s.contracts.values(),
      (x) => x.feature_id === c.feature_id && x.name === c.name && x.version === c.version,
      `contract ${c.name} v${c.version} already exists`,
    );
    const row = { ...copy(c), id: this.nextId() };
    this.setIn(this.s.contracts, row.id, row);
    return copy(row);
  }
  async insertBacklogItem(item: Omit<BacklogItem, 'id'>) {
    const row = { ...copy(item), id: this.nextId() };
    this.setIn(this.s.backlog, row.id, row);
    return copy(row);
  }
  async updateBacklogItem(id: number, patch: Partial<BacklogItem>) {
    const old = this.s.backlog.get(id);
    if (!old) throw new NotFoundError('backlog item', id);
    const row = { ...old, ...copy(patch), id };
    this.setIn(this.s.backlog, id, row);
    return copy(row);
  }
  async insertJob(job: AgentJob) {
    if (this.s.jobs.has(job.id)) throw new WorkflowError('already_exists', `job ${job.id} already exists`);
    this.setIn(this.s.jobs, job.id, copy(job));
  }
  async updateJob(id: string, patch: Partial<AgentJob>) {
    const old = this.s.jobs.get(id);
    if (!old) throw new NotFoundError('job', id);
    const row = { ...old, ...copy(patch), id };
    this.setIn(this.s.jobs, id, row);
    return copy(row);
  }
  async appendAgentEvent(event: AgentEvent) {
    const { id: _ignored, ...fields } = copy(event);
    const row: StoredAgentEvent = { ...fields, id: this.nextId() };
    this.setIn(this.s.agentEvents, row.id, row);
    return copy(row);
  }
  async putSyncLink(link: SyncLink) {
    this.setIn(this.s.syncLinks, `${link.system}\0${link.local_key}`, copy(link));
  }
  async recordDelivery(deliveryId: string, receivedAt: string) {
    if (this.s.deliveries.has(deliveryId)) return false;
    this.s.deliveries.set(deliveryId, receivedAt);
    this.undo.push(() => this.s.deliveries.delete(deliveryId));
    return true;
  }
  async pruneDeliveries(receivedBefore: string) {
    let pruned = 0;
    for (const [id, at] of this.s.deliveries) {
      if (at >= receivedBefore) continue;
      this.s.deliveries.delete(id);
      this.undo.push(() => this.s.deliveries.set(id, at));
      pruned++;
    }
    return pruned;
  }
  async appendAudit(chain: string, build: EntryBuilder) {
    assertChainName(chain);
    const entries = this.s.chains.get(chain) ?? [];
    const last = entries[entries.length - 1];
    const head: ChainHead = { size: entries.length, hash: last ? last.entry.hash : null };
    const sealed = build(head);
    assertContinuesHead(head, sealed);
    this.setIn(this.s.chains, chain, [...entries, ...sealed]);
    return sealed;
  }
}

/**
 * A `WorkflowStore` in memory. Nothing survives the process.
 *
 * @example
 * ```ts
 * const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'demo' });
 * ```
 */
export class MemoryWorkflowStore implements WorkflowStore {
  readonly kind = 'memory';
  private readonly state: State = {
    features: new Map(),
    workPackages: new Map(),
    evidence: new Map(),
    metrics: new Map(),
    rules: new Map(),
    contracts: new Map(),
    backlog: new Map(),
    jobs: new Map(),
    agentEvents: new Map(),
    syncLinks: new Map(),
    deliveries: new Map(),
    chains: new Map(),
    nextId: 1,
  };
  private readonly mutex = new Mutex();
  readonly reader: WorkflowReader = new MemoryReader(this.state);

  transact<T>(fn: (tx: WorkflowTx) => Promise<T>): Promise<T> {
    return this.mutex.run(async () => {
      const tx = new MemoryTx(this.state);
      try {
        return await fn(tx);
      } catch (error) {
        for (const undo of tx.undo.reverse()) undo();
        throw error;
      }
    });
  }

  auditStore(chain: string): AuditStore {
    assertChainName(chain);
    const entries = () => this.state.chains.get(chain) ?? [];
    return {
      head: async () => {
        const list = entries();
        const last = list[list.length - 1];
        return { size: list.length, hash: last ? last.entry.hash : null };
      },
      append: (build) => this.transact((tx) => tx.appendAudit(chain, build)),
      read: (range = {}) => {
        const list = entries();
        const from = Math.max(1, range.fromId ?? 1);
        const to = Math.min(list.length, range.toId ?? list.length);
        return (async function* () {
          for (let id = from; id <= to; id++) yield list[id - 1]!.entry as AuditEntry;
        })();
      },
      lines: () => {
        const list = entries();
        return (async function* () {
          for (const s of list) yield s.line;
        })();
      },
    };
  }

  async auditChains(): Promise<string[]> {
    return [...this.state.chains.keys()].filter((k) => (this.state.chains.get(k)?.length ?? 0) > 0).sort();
  }

  async close(): Promise<void> {}
}
