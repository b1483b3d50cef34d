/**
 * @module workflowStore
 * The `WorkflowStore` port. All writes happen inside `transact`, where the
 * adapter gives a transaction that reads, writes and appends audit entries
 * together: a state change and its audit entry commit together or not at
 * all. Adapters: memory, SQLite (`@switchyard/workflow/sqlite`) and
 * PostgreSQL (`@switchyard/workflow/postgres`); all run one contract suite
 * (`@switchyard/workflow/contract`).
 */
import type { AuditEntry, AuditStore, EntryBuilder, SealedEntry } from '@switchyard/audit-chain';
import type { Contract, Evidence, Feature, FeatureState, GovernanceRule, Metric, WorkPackage } from '../domain/model.js';
import type { AgentJob, BacklogItem, BacklogStatus, ItemType, SyncLink } from '../domain/records.js';
import type { AgentEvent, AgentEventFilter, StoredAgentEvent } from '../events.js';

/** Filter of {@link WorkflowReader.listEvidence}: `wpId: null` means feature-level evidence only. */
export interface EvidenceFilter {
  featureId: number;
  wpId?: number | null;
}

/** Read access, inside or outside a transaction. */
export interface WorkflowReader {
  getFeature(slug: string): Promise<Feature | undefined>;
  getFeatureById(id: number): Promise<Feature | undefined>;
  listFeatures(filter?: { state?: FeatureState }): Promise<Feature[]>;
  getWorkPackage(featureId: number, sequence: number): Promise<WorkPackage | undefined>;
  listWorkPackages(featureId: number): Promise<WorkPackage[]>;
  listEvidence(filter: EvidenceFilter): Promise<Evidence[]>;
  getEvidence(id: number): Promise<Evidence | undefined>;
  /** Metrics of a feature (and of one work package when `wpId` is a number), oldest first. */
  listMetrics(featureId: number, wpId?: number | null): Promise<Metric[]>;
  listRules(): Promise<GovernanceRule[]>;
  getRule(ruleId: string): Promise<GovernanceRule | undefined>;
  /**
   * The entries of an audit chain, oldest first, as this reader sees them (inside a
   * transaction: with its own appends), for rules that read a feature's trail, such as its
   * own governance settings.
   */
  auditEntries(chain: string): Promise<AuditEntry[]>;
  /** Contracts of a feature, by name then version. */
  listContracts(featureId: number, name?: string): Promise<Contract[]>;
  getBacklogItem(id: number): Promise<BacklogItem | undefined>;
  listBacklog(filter?: { status?: BacklogStatus; type?: ItemType }): Promise<BacklogItem[]>;
  getJob(id: string): Promise<AgentJob | undefined>;
  listJobs(filter?: { featureSlug?: string; state?: AgentJob['state'] }): Promise<AgentJob[]>;
  getSyncLink(system: SyncLink['system'], localKey: string): Promise<SyncLink | undefined>;
  listSyncLinks(system?: SyncLink['system']): Promise<SyncLink[]>;
  /** Stored agent events, oldest first: what jobs in any process reported (see {@link WorkflowTx.appendAgentEvent}). */
  listAgentEvents(filter?: AgentEventFilter): Promise<StoredAgentEvent[]>;
}

/** A transaction: reads see its own writes; nothing is visible to others until it commits. */
export interface WorkflowTx extends WorkflowReader {
  /**
   * Serializes transactions on one chain (a feature's slug): call it before
   * reading state you will change. Memory and SQLite serialize every
   * transaction anyway; PostgreSQL takes a transaction-scoped advisory lock.
   */
  lock(chain: string): Promise<void>;
  insertFeature(feature: Omit<Feature, 'id'>): Promise<Feature>;
  updateFeature(id: number, patch: Partial<Omit<Feature, 'id' | 'slug' | 'created_at'>>): Promise<Feature>;
  insertWorkPackage(wp: Omit<WorkPackage, 'id'>): Promise<WorkPackage>;
  updateWorkPackage(id: number, patch: Partial<Omit<WorkPackage, 'id' | 'feature_id' | 'sequence' | 'created_at'>>): Promise<WorkPackage>;
  insertEvidence(evidence: Omit<Evidence, 'id'>): Promise<Evidence>;
  insertMetric(metric: Omit<Metric, 'id'>): Promise<Metric>;
  /** Inserts or replaces a rule. */
  putRule(rule: GovernanceRule): Promise<void>;
  /** Inserts a rule unless one with its id exists (seeding defaults). */
  seedRule(rule: GovernanceRule): Promise<void>;
  insertContract(contract: Omit<Contract, 'id'>): Promise<Contract>;
  insertBacklogItem(item: Omit<BacklogItem, 'id'>): Promise<BacklogItem>;
  updateBacklogItem(id: number, patch: Partial<Omit<BacklogItem, 'id' | 'created_at'>>): Promise<BacklogItem>;
  insertJob(job: AgentJob): Promise<void>;
  updateJob(id: string, patch: Partial<Omit<AgentJob, 'id' | 'created_at'>>): Promise<AgentJob>;
  putSyncLink(link: SyncLink): Promise<void>;
  /** Stores an agent event (its `id` is ignored) and returns it with the id the store gave it. */
  appendAgentEvent(event: AgentEvent): Promise<StoredAgentEvent>;
  /** Records a webhook delivery id; false when it was seen before. */
  recordDelivery(deliveryId: string, receivedAt: string): Promise<boolean>;
  /** Forgets webhook deliveries received before `receivedBefore` (ISO 8601); returns how many. */
  pruneDeliveries(receivedBefore: string): Promise<number>;
  /** Appends to an audit chain inside this transaction (see audit-chain's `AuditStore.append`). */
  appendAudit(chain: string, build: EntryBuilder): Promise<SealedEntry[]>;
}

/**
 * Port for workflow persistence.
 *
 * @example
 * ```ts
 * const store = new MemoryWorkflowStore();
 * const feature = await store.transact((tx) => tx.getFeature('login'));
 * ```
 */
export interface WorkflowStore {
  /** `memory`, `sqlite` or `postgres`. */
  readonly kind: string;
  /** Runs `fn` in one transaction: it commits when `fn` resolves and rolls back when it throws. */
  transact<T>(fn: (tx: WorkflowTx) => Promise<T>): Promise<T>;
  /** Reads outside a transaction. */
  readonly reader: WorkflowReader;
  /** Audit-chain's `AuditStore` over this store's own audit table, for one chain. */
  auditStore(chain: string): AuditStore;
  /** Names of the chains that hold entries. */
  auditChains(): Promise<string[]>;
  close(): Promise<void>;
}
