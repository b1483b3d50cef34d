/**
 * @module sqlWorkflowStore
 * The `WorkflowStore` over SQL, shared by the SQLite and PostgreSQL
 * adapters. Audit entries live in the store's own `audit_entries` table,
 * stored verbatim (canonical lines), so a transition and its entry commit in
 * one transaction, and the table doubles as audit-chain's `AuditStore`.
 */
import type { AuditEntry, AuditStore, ChainHead, EntryBuilder, SealedEntry } from '@switchyard/audit-chain';
import type { Contract, Evidence, Feature, FeatureState, GovernanceRule, Metric, WorkPackage } from '../../domain/model.js';
import type { AgentJob, BacklogItem, BacklogStatus, ItemType, SyncLink } from '../../domain/records.js';
import { NotFoundError, WorkflowError } from '../../errors.js';
import type { AgentEvent, AgentEventFilter, StoredAgentEvent } from '../../events.js';
import { assertChainName, assertContinuesHead } from '../chainCheck.js';
import type { EvidenceFilter, WorkflowReader, WorkflowStore, WorkflowTx } from '../workflowStore.js';
import { migrate } from './migrations.js';
import type { SqlDriver, SqlRow, SqlSession } from './sqlDriver.js';

const json = (value: unknown) => JSON.stringify(value);
const num = (v: unknown) => Number(v);
const strOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v));
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const toFeature = (r: SqlRow): Feature => ({
  id: num(r.id),
  slug: String(r.slug),
  title: String(r.title),
  description: String(r.description),
  state: r.state as Feature['state'],
  target_branch: String(r.target_branch),
  created_at: String(r.created_at),
  updated_at: String(r.updated_at),
});
const toWorkPackage = (r: SqlRow): WorkPackage => ({
  id: num(r.id),
  feature_id: num(r.feature_id),
  sequence: num(r.sequence),
  title: String(r.title),
  state: r.state as WorkPackage['state'],
  depends_on: JSON.parse(String(r.depends_on)),
  file_scope: JSON.parse(String(r.file_scope)),
  agent_id: strOrNull(r.agent_id),
  pr_url: strOrNull(r.pr_url),
  created_at: String(r.created_at),
  updated_at: String(r.updated_at),
});
const toEvidence = (r: SqlRow): Evidence => ({
  id: num(r.id),
  feature_id: num(r.feature_id),
  wp_id: numOrNull(r.wp_id),
  type: r.type as Evidence['type'],
  reference: String(r.reference),
  summary: String(r.summary),
  passed: r.passed === null || r.passed === undefined ? null : Number(r.passed) === 1,
  data: JSON.parse(String(r.data)),
  actor: String(r.actor),
  created_at: String(r.created_at),
});
const toMetric = (r: SqlRow): Metric => ({
  id: num(r.id),
  name: String(r.name),
  value: num(r.value),
  feature_id: num(r.feature_id),
  wp_id: numOrNull(r.wp_id),
  recorded_at: String(r.recorded_at),
});
const toContract = (r: SqlRow): Contract => ({
  id: num(r.id),
  feature_id: num(r.feature_id),
  version: num(r.version),
  name: String(r.name),
  content: String(r.content),
  content_hash: String(r.content_hash),
  actor: String(r.actor),
  created_at: String(r.created_at),
});
const toBacklogItem = (r: SqlRow): BacklogItem => ({
  id: num(r.id),
  title: String(r.title),
  description: String(r.description),
  type: r.type as BacklogItem['type'],
  status: r.status as BacklogItem['status'],
  priority: num(r.priority),
  confidence: num(r.confidence),
  source: r.source as BacklogItem['source'],
  feature_slug: strOrNull(r.feature_slug),
  created_at: String(r.created_at),
  updated_at: String(r.updated_at),
});

const toAgentEvent = (r: SqlRow): StoredAgentEvent => ({
  id: num(r.id),
  jobId: String(r.job_id),
  featureSlug: String(r.feature_slug),
  wpSequence: num(r.wp_sequence),
  kind: r.kind as AgentEvent['kind'],
  data: JSON.parse(String(r.data)) as Record<string, unknown>,
  at: num(r.at),
});

/** Columns of an update, from a patch (JSON-encoding arrays and objects). */
function setClause(patch: Record<string, unknown>, jsonColumns: readonly string[]): { sql: string; params: unknown[] } {
  const keys = Object.keys(patch).filter((k) => patch[k] !== undefined);
  const params = keys.map((k) =>
    jsonColumns.includes(k) ? json(patch[k]) : typeof patch[k] === 'boolean' ? (patch[k] ? 1 : 0) : patch[k],
  );
  return { sql: keys.map((k) => `${k} = ?`).join(', '), params };
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

class SqlReader implements WorkflowReader {
  constructor(protected readonly s: SqlSession) {}

  async getFeature(slug: string) {
    const [r] = await this.s.all('SELECT * FROM features WHERE slug = ?', [slug]);
    return r && toFeature(r);
  }
  async getFeatureById(id: number) {
    const [r] = await this.s.all('SELECT * FROM features WHERE id = ?', [id]);
    return r && toFeature(r);
  }
  async listFeatures(filter: { state?: FeatureState } = {}) {
    const rows = filter.state
      ? await this.s.all('SELECT * FROM features WHERE state = ? ORDER BY id', [filter.state])
      : await this.s.all('SELECT * FROM features ORDER BY id');
    return rows.map(toFeature);
  }
  async getWorkPackage(featureId: number, sequence: number) {
    const [r] = await this.s.all('SELECT * FROM work_packages WHERE feature_id = ? AND sequence = ?', [featureId, sequence]);
    return r && toWorkPackage(r);
  }
  async listWorkPackages(featureId: number) {
    return (await this.s.all('SELECT * FROM work_packages WHERE feature_id = ? ORDER BY sequence', [featureId])).map(toWorkPackage);
  }
  async listEvidence(filter: EvidenceFilter) {
    const rows =
      filter.wpId === undefined
        ? await this.s.all('SELECT * FROM evidence WHERE feature_id = ? ORDER BY id', [filter.featureId])
        : filter.wpId === null
          ? await this.s.all('SELECT * FROM evidence WHERE feature_id = ? AND wp_id IS NULL ORDER BY id', [filter.featureId])
          : await this.s.all('SELECT * FROM evidence WHERE feature_id = ? AND wp_id = ? ORDER BY id', [filter.featureId, filter.wpId]);
    return rows.map(toEvidence);
  }
  async getEvidence(id: number) {
    const [r] = await this.s.all('SELECT * FROM evidence WHERE id = ?', [id]);
    return r && toEvidence(r);
  }
  async listMetrics(featureId: number, wpId?: number | null) {
    const rows =
      wpId === undefined
        ? await this.s.all('SELECT * FROM metrics WHERE feature_id = ? ORDER BY id', [featureId])
        : wpId === null
          ? await this.s.all('SELECT * FROM metrics WHERE feature_id = ? AND wp_id IS NULL ORDER BY id', [featureId])
          : await this.s.all('SELECT * FROM metrics WHERE feature_id = ? AND wp_id = ? ORDER BY id', [featureId, wpId]);
    return rows.map(toMetric);
  }
  async listRules() {
    return (await this.s.all('SELECT body FROM governance_rules ORDER BY rule_id')).map(
      (r) => JSON.parse(String(r.body)) as GovernanceRule,
    );
  }
  async getRule(ruleId: string) {
    const [r] = await this.s.all('SELECT body FROM governance_rules WHERE rule_id = ?', [ruleId]);
    return r && (JSON.parse(String(r.body)) as GovernanceRule);
  }
  async auditEntries(chain: string) {
    assertChainName(chain);
    const rows = await this.s.all('SELECT line FROM audit_entries WHERE chain = ? ORDER BY id', [chain]);
    return rows.map((r) => JSON.parse(String(r.line)) as AuditEntry);
  }
  async listContracts(featureId: number, name?: string) {
    const rows =
      name === undefined
        ? await this.s.all('SELECT * FROM contracts WHERE feature_id = ? ORDER BY name, version', [featureId])
        : await this.s.all('SELECT * FROM contracts WHERE feature_id = ? AND name = ? ORDER BY version', [featureId, name]);
    return rows.map(toContract);
  }
  async getBacklogItem(id: number) {
    const [r] = await this.s.all('SELECT * FROM backlog_items WHERE id = ?', [id]);
    return r && toBacklogItem(r);
  }
  async listBacklog(filter: { status?: BacklogStatus; type?: ItemType } = {}) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.status) where.push('status = ?') && params.push(filter.status);
    if (filter.type) where.push('type = ?') && params.push(filter.type);
    const sql = `SELECT * FROM backlog_items${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id`;
    return (await this.s.all(sql, params)).map(toBacklogItem);
  }
  async getJob(id: string) {
    const [r] = await this.s.all('SELECT body FROM agent_jobs WHERE id = ?', [id]);
    return r && (JSON.parse(String(r.body)) as AgentJob);
  }
  async listJobs(filter: { featureSlug?: string; state?: AgentJob['state'] } = {}) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.featureSlug) where.push('feature_slug = ?') && params.push(filter.featureSlug);
    if (filter.state) where.push('state = ?') && params.push(filter.state);
    const sql = `SELECT body FROM agent_jobs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id`;
    return (await this.s.all(sql, params)).map((r) => JSON.parse(String(r.body)) as AgentJob);
  }
  async listAgentEvents(filter: AgentEventFilter = {}) {
    const where = ['id > ?'];
    const params: unknown[] = [filter.afterId ?? 0];
    if (filter.jobId) where.push('job_id = ?') && params.push(filter.jobId);
    if (filter.featureSlug) where.push('feature_slug = ?') && params.push(filter.featureSlug);
    const limit = filter.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(filter.limit))}` : '';
    return (await this.s.all(`SELECT * FROM agent_events WHERE ${where.join(' AND ')} ORDER BY id${limit}`, params)).map(toAgentEvent);
  }
  async getSyncLink(system: SyncLink['system'], localKey: string) {
    const [r] = await this.s.all('SELECT body FROM sync_links WHERE system = ? AND local_key = ?', [system, localKey]);
    return r && (JSON.parse(String(r.body)) as SyncLink);
  }
  async listSyncLinks(system?: SyncLink['system']) {
    const rows = system
      ? await this.s.all('SELECT body FROM sync_links WHERE system = ? ORDER BY local_key', [system])
      : await this.s.all('SELECT body FROM sync_links ORDER BY system, local_key');
    return rows.map((r) => JSON.parse(String(r.body)) as SyncLink);
  }
}

class SqlTx extends SqlReader implements WorkflowTx {
  constructor(
    session: SqlSession,
    private readonly driver: SqlDriver,
  ) {
    super(session);
  }

  private async insert<T>(
    table: string,
    row: Record<string, unknown>,
    map: (r: SqlRow) => T,
    jsonColumns: readonly string[] = [],
  ): Promise<T> {
    const keys = Object.keys(row);
    const params = keys.map((k) => (jsonColumns.includes(k) ? json(row[k]) : typeof row[k] === 'boolean' ? (row[k] ? 1 : 0) : row[k]));
    try {
      const [r] = await this.s.all(
        `INSERT INTO ${table} (${keys.join(', ')}) VALUES (${keys.map(() => '?').join(', ')}) RETURNING *`,
        params,
      );
      return map(r!);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new WorkflowError('already_exists', `${table}: a row with that key already exists`, { cause: error });
      throw error;
    }
  }

  private async update<T>(
    table: string,
    key: string,
    id: unknown,
    patch: Record<string, unknown>,
    map: (r: SqlRow) => T,
    what: string,
    jsonColumns: readonly string[] = [],
  ): Promise<T> {
    const set = setClause(patch, jsonColumns);
    const rows = set.sql
      ? await this.s.all(`UPDATE ${table} SET ${set.sql} WHERE ${key} = ? RETURNING *`, [...set.params, id])
      : await this.s.all(`SELECT * FROM ${table} WHERE ${key} = ?`, [id]);
    if (!rows[0]) throw new NotFoundError(what, id as number);
    return map(rows[0]);
  }

  lock(chain: string) {
    return this.driver.lockChain(this.s, chain);
  }
  insertFeature(f: Omit<Feature, 'id'>) {
    return this.insert('features', f, toFeature);
  }
  updateFeature(id: number, patch: Partial<Feature>) {
    return this.update('features', 'id', id, patch, toFeature, 'feature');
  }
  insertWorkPackage(wp: Omit<WorkPackage, 'id'>) {
    return this.insert('work_packages', wp, toWorkPackage, ['depends_on', 'file_scope']);
  }
  updateWorkPackage(id: number, patch: Partial<WorkPackage>) {
    return this.update('work_packages', 'id', id, patch, toWorkPackage, 'work package', ['depends_on', 'file_scope']);
  }
  insertEvidence(e: Omit<Evidence, 'id'>) {
    return this.insert('evidence', e, toEvidence, ['data']);
  }
  insertMetric(m: Omit<Metric, 'id'>) {
    return this.insert('metrics', m, toMetric);
  }
  async putRule(rule: GovernanceRule) {
    await this.s.run(
      'INSERT INTO governance_rules (rule_id, body) VALUES (?, ?) ON CONFLICT (rule_id) DO UPDATE SET body = excluded.body',
      [rule.rule_id, json(rule)],
    );
  }
  async seedRule(rule: GovernanceRule) {
    await this.s.run('INSERT INTO governance_rules (rule_id, body) VALUES (?, ?) ON CONFLICT (rule_id) DO NOTHING', [
      rule.rule_id,
      json(rule),
    ]);
  }
  insertContract(c: Omit<Contract, 'id'>) {
    return this.insert('contracts', c, toContract);
  }
  insertBacklogItem(item: Omit<BacklogItem, 'id'>) {
    return this.insert('backlog_items', item, toBacklogItem);
  }
  updateBacklogItem(id: number, patch: Partial<BacklogItem>) {
    return this.update('backlog_items', 'id', id, patch, toBacklogItem, 'backlog item');
  }
  async insertJob(job: AgentJob) {
    try {
      await this.s.run('INSERT INTO agent_jobs (id, feature_slug, state, created_at, body) VALUES (?, ?, ?, ?, ?)', [
        job.id,
        job.feature_slug,
        job.state,
        job.created_at,
        json(job),
      ]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new WorkflowError('already_exists', `job ${job.id} already exists`, { cause: error });
      throw error;
    }
  }
  async updateJob(id: string, patch: Partial<AgentJob>) {
    const old = await this.getJob(id);
    if (!old) throw new NotFoundError('job', id);
    const job: AgentJob = { ...old, ...(JSON.parse(json(patch)) as Partial<AgentJob>), id };
    await this.s.run('UPDATE agent_jobs SET state = ?, body = ? WHERE id = ?', [job.state, json(job), id]);
    return job;
  }
  async appendAgentEvent(event: AgentEvent) {
    const [r] = await this.s.all(
      'INSERT INTO agent_events (job_id, feature_slug, wp_sequence, kind, data, at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
      [event.jobId, event.featureSlug, event.wpSequence, event.kind, json(event.data), Math.round(event.at)],
    );
    return toAgentEvent(r!);
  }
  async putSyncLink(link: SyncLink) {
    await this.s.run(
      'INSERT INTO sync_links (system, local_key, body) VALUES (?, ?, ?) ON CONFLICT (system, local_key) DO UPDATE SET body = excluded.body',
      [link.system, link.local_key, json(link)],
    );
  }
  async recordDelivery(deliveryId: string, receivedAt: string) {
    return (
      (await this.s.run('INSERT INTO webhook_deliveries (delivery_id, received_at) VALUES (?, ?) ON CONFLICT (delivery_id) DO NOTHING', [
        deliveryId,
        receivedAt,
      ])) === 1
    );
  }
  async pruneDeliveries(receivedBefore: string) {
    return this.s.run('DELETE FROM webhook_deliveries WHERE received_at < ?', [receivedBefore]);
  }
  async appendAudit(chain: string, build: EntryBuilder): Promise<SealedEntry[]> {
    assertChainName(chain);
    await this.driver.lockChain(this.s, chain);
    const [last] = await this.s.all('SELECT id, hash FROM audit_entries WHERE chain = ? ORDER BY id DESC LIMIT 1', [chain]);
    const head: ChainHead = last ? { size: num(last.id), hash: String(last.hash) } : { size: 0, hash: null };
    const sealed = build(head);
    assertContinuesHead(head, sealed);
    for (const { entry, line } of sealed) {
      await this.s.run('INSERT INTO audit_entries (chain, id, hash, line) VALUES (?, ?, ?, ?)', [chain, entry.id, entry.hash, line]);
    }
    return sealed;
  }
}

/**
 * The SQL `WorkflowStore`; open it through `SqliteWorkflowStore.open` or
 * `PostgresWorkflowStore.open`.
 */
export class SqlWorkflowStore implements WorkflowStore {
  readonly kind: string;
  readonly reader: WorkflowReader;
  protected readonly driver: SqlDriver;

  protected constructor(driver: SqlDriver) {
    this.driver = driver;
    this.kind = driver.dialect;
    this.reader = new SqlReader(driver.session);
  }

  /** Runs pending migrations, then wraps the driver. */
  static async openWith(driver: SqlDriver): Promise<SqlWorkflowStore> {
    try {
      await migrate(driver);
    } catch (error) {
      await driver.close().catch(() => undefined);
      throw new WorkflowError('store_failed', `could not migrate the ${driver.dialect} workflow store: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return new SqlWorkflowStore(driver);
  }

  transact<T>(fn: (tx: WorkflowTx) => Promise<T>): Promise<T> {
    return this.driver.transaction((session) => fn(new SqlTx(session, this.driver)));
  }

  auditStore(chain: string): AuditStore {
    assertChainName(chain);
    const session = this.driver.session;
    return {
      head: async () => {
        const [last] = await session.all('SELECT id, hash FROM audit_entries WHERE chain = ? ORDER BY id DESC LIMIT 1', [chain]);
        return last ? { size: num(last.id), hash: String(last.hash) } : { size: 0, hash: null };
      },
      append: (build) => this.transact((tx) => tx.appendAudit(chain, build)),
      read: (range = {}) =>
        (async function* () {
          const rows = await session.all('SELECT line FROM audit_entries WHERE chain = ? AND id >= ? AND id <= ? ORDER BY id', [
            chain,
            range.fromId ?? 1,
            range.toId ?? 2_147_483_647,
          ]);
          for (const r of rows) yield JSON.parse(String(r.line)) as AuditEntry;
        })(),
      lines: () =>
        (async function* () {
          const rows = await session.all('SELECT line FROM audit_entries WHERE chain = ? ORDER BY id', [chain]);
          for (const r of rows) yield String(r.line);
        })(),
    };
  }

  async auditChains(): Promise<string[]> {
    return (await this.driver.session.all('SELECT DISTINCT chain FROM audit_entries ORDER BY chain')).map((r) => String(r.chain));
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}
