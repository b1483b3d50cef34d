/**
 * @module syncEngine
 * Keeps features in step with the tracker (and, optionally, issues on the
 * code host). Each link remembers the content hash of both sides at the
 * last sync: when only one side changed since, that side wins; when both
 * changed to different content, it is a conflict and nothing is
 * overwritten. States are pushed through the tracker's state mapping but
 * never pulled: a tracker cannot skip the workflow's gates, so a differing
 * remote state is reported as drift.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalize, type JsonValue } from '@switchyard/audit-chain';
import type { Feature, FeatureState } from '../domain/model.js';
import type { SyncLink } from '../domain/records.js';
import { InvalidArgumentError, WorkflowError } from '../errors.js';
import { isoNow } from '../util/clock.js';
import type { Workflow } from '../workflow.js';
import type { CodeHostAdapter, IssueContent, RemoteIssue, TrackerAdapter } from './adapters.js';

/** `sha256:<hex>` of the canonical JSON of `{title, description, state}`. */
export function contentHash(content: IssueContent): string {
  const value = { title: content.title, description: content.description, state: content.state } as unknown as JsonValue;
  return `sha256:${createHash('sha256').update(canonicalize(value)).digest('hex')}`;
}

/** The outcome of syncing one feature with one system. */
export interface SyncResult {
  system: SyncLink['system'];
  feature_slug: string;
  status: 'created' | 'pushed' | 'pulled' | 'in_sync' | 'remote_changed' | 'local_changed' | 'conflict';
  remote_id: string;
  remote_url: string | null;
  /** Set when the remote state maps to a feature state other than the local one. */
  state_drift?: { remote: string; local: FeatureState; remote_means: FeatureState | null };
  local?: IssueContent;
  remote?: IssueContent;
}

/** Options of {@link SyncEngine}. */
export interface SyncEngineOptions {
  workflow: Workflow;
  tracker?: TrackerAdapter;
  codeHost?: CodeHostAdapter;
  /**
   * Secret of the tracker's webhook signatures: HMAC-SHA256 of `<timestamp>.<delivery id>.<raw body>`
   * (see {@link signDelivery}).
   */
  webhookSecret?: string;
  /**
   * Header names of the webhook (defaults `x-switchyard-signature`, `x-switchyard-delivery`,
   * `x-switchyard-timestamp`).
   */
  signatureHeader?: string;
  deliveryHeader?: string;
  timestampHeader?: string;
  /**
   * How far a delivery's timestamp may be from now, either way (default and maximum 5 minutes).
   * Older deliveries are refused, so a captured one cannot be replayed once its id is forgotten.
   */
  webhookToleranceMs?: number;
}

/** The default (and largest) webhook timestamp window: 5 minutes. */
export const WEBHOOK_TOLERANCE_MS = 300_000;

/** What a webhook delivery did. */
export interface WebhookResult {
  status: 'applied' | 'duplicate' | 'conflict' | 'ignored' | 'in_sync';
  delivery_id: string;
  feature_slug?: string;
}

const SYNC_ACTOR = 'sync:tracker';

/**
 * @example
 * ```ts
 * const sync = new SyncEngine({ workflow, tracker, webhookSecret: process.env.TRACKER_WEBHOOK_SECRET });
 * await sync.push('001-login');
 * ```
 */
export class SyncEngine {
  constructor(private readonly options: SyncEngineOptions) {}

  private get workflow() {
    return this.options.workflow;
  }

  private system(system: SyncLink['system']): TrackerAdapter | CodeHostAdapter {
    const adapter = system === 'tracker' ? this.options.tracker : this.options.codeHost;
    if (!adapter)
      throw new WorkflowError('invalid_argument', `no ${system === 'tracker' ? 'tracker' : 'code host'} is configured`, {
        details: { field: 'system' },
      });
    return adapter;
  }

  private localContent(system: SyncLink['system'], feature: Feature): IssueContent {
    const state =
      system === 'tracker'
        ? this.options.tracker!.mapState(feature.state)
        : feature.state === 'SHIPPED' || feature.state === 'RETROSPECTED'
          ? 'closed'
          : 'open';
    return { title: feature.title, description: feature.description, state };
  }

  private async saveLink(system: SyncLink['system'], slug: string, local: IssueContent, remote: RemoteIssue): Promise<void> {
    const link: SyncLink = {
      system,
      local_key: `feature:${slug}`,
      remote_id: remote.id,
      remote_url: remote.url,
      local_hash: contentHash(local),
      remote_hash: contentHash(remote),
      updated_at: isoNow(this.workflow.clock),
    };
    await this.workflow.store.transact((tx) => tx.putSyncLink(link));
  }

  private drift(system: SyncLink['system'], feature: Feature, remote: RemoteIssue): SyncResult['state_drift'] {
    if (system !== 'tracker') return undefined;
    const tracker = this.options.tracker!;
    if (remote.state.toLowerCase() === tracker.mapState(feature.state).toLowerCase()) return undefined;
    return { remote: remote.state, local: feature.state, remote_means: tracker.unmapState(remote.state) ?? null };
  }

  /** Compares both sides with the last sync: which one changed. */
  private async compare(system: SyncLink['system'], slug: string) {
    const adapter = this.system(system);
    const feature = await this.workflow.getFeature(slug);
    const local = this.localContent(system, feature);
    const link = await this.workflow.store.reader.getSyncLink(system, `feature:${slug}`);
    if (!link) return { adapter, feature, local, link, remote: undefined, localChanged: true, remoteChanged: false };
    const remote = await adapter.getIssue(link.remote_id);
    return {
      adapter,
      feature,
      local,
      link,
      remote,
      localChanged: contentHash(local) !== link.local_hash,
      remoteChanged: contentHash(remote) !== link.remote_hash,
    };
  }

  /** Pushes local changes (creating the remote issue the first time). Refuses to overwrite remote changes. */
  async push(slug: string, system: SyncLink['system'] = 'tracker'): Promise<SyncResult> {
    const c = await this.compare(system, slug);
    if (!c.link || !c.remote) {
      const created = await c.adapter.createIssue(c.local);
      await this.saveLink(system, slug, c.local, created);
      return { system, feature_slug: slug, status: 'created', remote_id: created.id, remote_url: created.url };
    }
    const base = { system, feature_slug: slug, remote_id: c.link.remote_id, remote_url: c.link.remote_url };
    const drift = this.drift(system, c.feature, c.remote);
    if (c.localChanged && c.remoteChanged && contentHash(c.local) !== contentHash(c.remote))
      return { ...base, status: 'conflict', local: c.local, remote: c.remote };
    if (!c.localChanged && c.remoteChanged)
      return { ...base, status: 'remote_changed', remote: c.remote, ...(drift ? { state_drift: drift } : {}) };
    if (!c.localChanged) return { ...base, status: 'in_sync' };
    const updated = await c.adapter.updateIssue(c.link.remote_id, c.local);
    await this.saveLink(system, slug, c.local, updated);
    return { ...base, status: 'pushed', remote_url: updated.url ?? base.remote_url };
  }

  /** Pulls remote title and description when only the remote changed. Refuses to overwrite local changes. */
  async pull(slug: string, system: SyncLink['system'] = 'tracker'): Promise<SyncResult> {
    const c = await this.compare(system, slug);
    if (!c.link || !c.remote)
      throw new WorkflowError('not_found', `feature ${slug} is not linked to the ${system}; push it first`, {
        details: { field: 'feature_slug' },
      });
    return this.applyRemote(system, slug, c.feature, c.local, c.link, c.remote, c.localChanged, c.remoteChanged);
  }

  private async applyRemote(
    system: SyncLink['system'],
    slug: string,
    feature: Feature,
    local: IssueContent,
    link: SyncLink,
    remote: RemoteIssue,
    localChanged: boolean,
    remoteChanged: boolean,
  ): Promise<SyncResult> {
    const base = { system, feature_slug: slug, remote_id: link.remote_id, remote_url: link.remote_url };
    const drift = this.drift(system, feature, remote);
    const withDrift = drift ? { state_drift: drift } : {};
    if (localChanged && remoteChanged && contentHash(local) !== contentHash(remote))
      return { ...base, status: 'conflict', local, remote, ...withDrift };
    if (!remoteChanged) return { ...base, status: localChanged ? 'local_changed' : 'in_sync', ...withDrift };
    const updated = await this.workflow.updateFeature(slug, {
      title: remote.title,
      description: remote.description,
      actor: system === 'tracker' ? SYNC_ACTOR : 'sync:code-host',
    });
    await this.saveLink(system, slug, this.localContent(system, updated), remote);
    return { ...base, status: 'pulled', ...withDrift };
  }

  /** Every link with its last sync. */
  status(system?: SyncLink['system']): Promise<SyncLink[]> {
    return this.workflow.store.reader.listSyncLinks(system);
  }

  /**
   * Handles a tracker webhook: verifies the HMAC-SHA256 signature of the
   * timestamp, the delivery id and the raw body (timing-safe), refuses a
   * timestamp more than the tolerance (5 minutes) from now, then applies the
   * delivery once per delivery id. Bad signatures and stale timestamps throw
   * `signature_invalid` before anything is read.
   *
   * Delivery ids are kept for twice the tolerance, then pruned: a delivery
   * accepted at the far edge of the window is still remembered when its
   * timestamp goes stale, so no replay falls between the two checks.
   */
  async handleTrackerWebhook(input: {
    headers: Record<string, string | string[] | undefined>;
    rawBody: Uint8Array;
  }): Promise<WebhookResult> {
    const secret = this.options.webhookSecret;
    if (!secret) throw new WorkflowError('invalid_argument', 'no webhook secret is configured', { details: { field: 'webhookSecret' } });
    const header = (name: string) => {
      const v = input.headers[name.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    };
    const deliveryId = header(this.options.deliveryHeader ?? 'x-switchyard-delivery');
    const timestamp = header(this.options.timestampHeader ?? 'x-switchyard-timestamp');
    verifySignature(
      secret,
      { timestamp: timestamp ?? '', deliveryId: deliveryId ?? '', body: input.rawBody },
      header(this.options.signatureHeader ?? 'x-switchyard-signature'),
    );
    if (!deliveryId || !/^[A-Za-z0-9_.:-]{1,200}$/.test(deliveryId))
      throw new InvalidArgumentError('delivery_id', 'missing or malformed delivery id header');
    const now = this.workflow.clock.now();
    const tolerance = Math.min(this.options.webhookToleranceMs ?? WEBHOOK_TOLERANCE_MS, WEBHOOK_TOLERANCE_MS);
    const sent = timestamp !== undefined && /^\d{1,12}$/.test(timestamp) ? Number(timestamp) * 1000 : Number.NaN;
    if (!(Math.abs(now - sent) <= tolerance)) {
      throw new WorkflowError('signature_invalid', `the webhook timestamp is missing or more than ${tolerance / 1000} s from now`, {
        details: { field: 'timestamp' },
      });
    }
    let payload: { issue?: Partial<RemoteIssue> & { id?: unknown } };
    try {
      payload = JSON.parse(Buffer.from(input.rawBody).toString('utf8'));
    } catch (error) {
      throw new InvalidArgumentError('body', 'not JSON', { cause: error });
    }
    const fresh = await this.workflow.store.transact(async (tx) => {
      await tx.pruneDeliveries(new Date(now - 2 * tolerance).toISOString());
      return tx.recordDelivery(deliveryId, new Date(now).toISOString());
    });
    if (!fresh) return { status: 'duplicate', delivery_id: deliveryId };
    const issue = payload.issue;
    if (!issue || (typeof issue.id !== 'string' && typeof issue.id !== 'number')) return { status: 'ignored', delivery_id: deliveryId };
    const link = (await this.workflow.store.reader.listSyncLinks('tracker')).find((l) => l.remote_id === String(issue.id));
    if (!link) return { status: 'ignored', delivery_id: deliveryId };
    const slug = link.local_key.replace(/^feature:/, '');
    const feature = await this.workflow.getFeature(slug);
    const local = this.localContent('tracker', feature);
    const remote: RemoteIssue = {
      id: String(issue.id),
      title: String(issue.title ?? ''),
      description: String(issue.description ?? ''),
      state: String(issue.state ?? ''),
      url: link.remote_url,
    };
    const result = await this.applyRemote(
      'tracker',
      slug,
      feature,
      local,
      link,
      remote,
      contentHash(local) !== link.local_hash,
      contentHash(remote) !== link.remote_hash,
    );
    const status = result.status === 'pulled' ? 'applied' : result.status === 'conflict' ? 'conflict' : 'in_sync';
    return { status, delivery_id: deliveryId, feature_slug: slug };
  }
}

/** What a webhook signature covers. */
export interface SignedDelivery {
  /** Unix seconds, as sent in the timestamp header. */
  timestamp: string;
  deliveryId: string;
  body: Uint8Array | string;
}

function deliveryMac(secret: string, delivery: SignedDelivery): Buffer {
  return createHmac('sha256', secret).update(`${delivery.timestamp}.${delivery.deliveryId}.`).update(delivery.body).digest();
}

/**
 * Checks `sha256=<hex>` against HMAC-SHA256(secret, `<timestamp>.<delivery id>.<body>`) with
 * `timingSafeEqual` on equal-length digests. The timestamp and the id are signed so that a
 * captured delivery can neither be sent again under a new id nor kept back until its id is forgotten.
 *
 * @example
 * ```ts
 * verifySignature(secret, { timestamp: '1767225600', deliveryId: 'd-1', body }, req.headers['x-switchyard-signature']);
 * ```
 */
export function verifySignature(secret: string, delivery: SignedDelivery, header: string | undefined): void {
  const expected = deliveryMac(secret, delivery);
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header ?? '');
  // Compare digests of equal length only; a malformed header is refused without a comparison.
  if (!match || !timingSafeEqual(Buffer.from(match[1]!, 'hex'), expected)) {
    throw new WorkflowError('signature_invalid', 'the webhook signature does not verify');
  }
}

/**
 * The headers of a delivery signed the way {@link verifySignature} expects (for senders and tests).
 *
 * @example
 * ```ts
 * const headers = signDelivery(secret, { deliveryId: 'd-1', body, timestamp: String(Math.floor(Date.now() / 1000)) });
 * await fetch(url, { method: 'POST', headers, body });
 * ```
 */
export function signDelivery(secret: string, delivery: SignedDelivery): Record<string, string> {
  return {
    'x-switchyard-signature': `sha256=${deliveryMac(secret, delivery).toString('hex')}`,
    'x-switchyard-delivery': delivery.deliveryId,
    'x-switchyard-timestamp': delivery.timestamp,
  };
}
