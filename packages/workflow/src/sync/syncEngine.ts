/**
 * @module syncEngine
 * Keeps features in step with the tracker (and, optionally, issues on the
 * code host). Each link remembers the content hash of both sides at the
 * last sync: when only one side changed since, that side wins; when both
 * changed to different content, it is a conflict and nothing is
 * overwritten. States are pushed through the tracker's state mapping. A
 * state change made in the tracker arrives by webhook and moves the
 * feature through the same gates as any other transition; when the gates
 * (or the state machine) refuse, the violations are posted back on the
 * tracker's issue as a comment and nothing moves. `sync pull` only reports
 * a differing state as drift.
 */
import { createHash } from 'node:crypto';
import { canonicalize, type JsonValue } from '@switchyard/audit-chain';
import type { Feature, FeatureState } from '../domain/model.js';
import type { SyncLink } from '../domain/records.js';
import { GateFailedError, type Violation, WorkflowError } from '../errors.js';
import { isoNow } from '../util/clock.js';
import type { Workflow } from '../workflow.js';
import type { CodeHostAdapter, IssueContent, RemoteIssue, TrackerAdapter } from './adapters.js';
import { customWebhookVerifier, type RawDelivery, WEBHOOK_TOLERANCE_MS, type WebhookVerifier } from './webhooks.js';

export { type SignedDelivery, signDelivery, verifySignature, WEBHOOK_TOLERANCE_MS } from './webhooks.js';

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
   * How the tracker's webhooks are verified (`linearWebhookVerifier`, `planeWebhookVerifier`,
   * `customWebhookVerifier`). Without it, `webhookSecret` selects the custom REST scheme.
   */
  webhookVerifier?: WebhookVerifier;
  /**
   * Secret of the custom REST tracker's webhook signatures: HMAC-SHA256 of
   * `<timestamp>.<delivery id>.<raw body>` (see `signDelivery` in `@switchyard/workflow/sync`).
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

/** What a webhook delivery did. */
export interface WebhookResult {
  /**
   * `applied`: title/description pulled; `transitioned`: the feature moved to the state the tracker set;
   * `refused`: the gates or the state machine refused that move (see `violations`; the tracker got a comment).
   */
  status: 'applied' | 'transitioned' | 'refused' | 'duplicate' | 'conflict' | 'ignored' | 'in_sync';
  delivery_id: string;
  feature_slug?: string;
  /** For `transitioned` and `refused`: the move the tracker asked for. */
  transition?: { from: FeatureState; to: FeatureState };
  /** For `refused`: why. */
  violations?: Violation[];
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

  private verifier(): WebhookVerifier {
    if (this.options.webhookVerifier) return this.options.webhookVerifier;
    const secret = this.options.webhookSecret;
    if (!secret) throw new WorkflowError('invalid_argument', 'no webhook secret is configured', { details: { field: 'webhookSecret' } });
    return customWebhookVerifier({
      secret,
      ...(this.options.signatureHeader ? { signatureHeader: this.options.signatureHeader } : {}),
      ...(this.options.deliveryHeader ? { deliveryHeader: this.options.deliveryHeader } : {}),
      ...(this.options.timestampHeader ? { timestampHeader: this.options.timestampHeader } : {}),
      ...(this.options.webhookToleranceMs ? { toleranceMs: this.options.webhookToleranceMs } : {}),
    });
  }

  /**
   * Handles a tracker webhook: the verifier checks the signature (timing-safe)
   * and freshness before anything is read, then the delivery is applied once
   * per delivery id. Bad signatures and stale timestamps throw `signature_invalid`.
   *
   * Delivery ids are kept for twice the largest window, then pruned: a delivery
   * accepted at the far edge of the window is still remembered when its
   * timestamp goes stale, so no replay falls between the two checks.
   *
   * A delivery about a linked issue is then applied: the issue is read back
   * from the tracker (the custom REST payload carries it), title and
   * description are pulled as `pull` would, and a changed state moves the
   * feature through the gates, or is refused with a comment on the issue.
   */
  async handleTrackerWebhook(input: RawDelivery): Promise<WebhookResult> {
    const now = this.workflow.clock.now();
    const delivery = this.verifier().verify(input, now);
    const deliveryId = delivery.deliveryId;
    const fresh = await this.workflow.store.transact(async (tx) => {
      await tx.pruneDeliveries(new Date(now - 2 * WEBHOOK_TOLERANCE_MS).toISOString());
      return tx.recordDelivery(delivery.dedupKey, new Date(now).toISOString());
    });
    if (!fresh) return { status: 'duplicate', delivery_id: deliveryId };
    const issue = delivery.issue;
    if (!issue) return { status: 'ignored', delivery_id: deliveryId };
    const link = (await this.workflow.store.reader.listSyncLinks('tracker')).find((l) => l.remote_id === issue.id);
    if (!link) return { status: 'ignored', delivery_id: deliveryId };
    const slug = link.local_key.replace(/^feature:/, '');
    const tracker = this.system('tracker') as TrackerAdapter;
    const remote: RemoteIssue =
      issue.title !== undefined && issue.state !== undefined
        ? { id: issue.id, title: issue.title, description: issue.description ?? '', state: issue.state, url: link.remote_url }
        : await tracker.getIssue(issue.id);
    const moved = await this.applyRemoteState(slug, remote, deliveryId);
    if (moved) return moved;
    const feature = await this.workflow.getFeature(slug);
    const local = this.localContent('tracker', feature);
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

  /**
   * A state the tracker set that stands for another feature state: the feature
   * moves there through the gates (not forced), and the link records the new
   * state on both sides. A refusal leaves the feature where it is and says why
   * on the tracker's issue. Undefined when the state needs no move.
   */
  private async applyRemoteState(slug: string, remote: RemoteIssue, deliveryId: string): Promise<WebhookResult | undefined> {
    const tracker = this.options.tracker!;
    const feature = await this.workflow.getFeature(slug);
    if (remote.state.toLowerCase() === tracker.mapState(feature.state).toLowerCase()) return undefined;
    const target = tracker.unmapState(remote.state);
    if (!target || target === feature.state) return undefined;
    const transition = { from: feature.state, to: target };
    try {
      await this.workflow.transitionFeature(slug, { to: target, actor: SYNC_ACTOR });
    } catch (error) {
      if (!(error instanceof WorkflowError) || !['gate_failed', 'invalid_transition', 'backward_transition'].includes(error.code))
        throw error;
      const violations: Violation[] =
        error instanceof GateFailedError
          ? error.violations
          : [
              {
                rule_id: `state-machine:${error.code}`,
                message: error.message,
                remediation: `Move the feature through ${feature.state}'s next states in order.`,
              },
            ];
      await tracker
        .commentOnIssue?.(remote.id, refusalComment(slug, feature.state, target, remote.state, violations))
        .catch(() => undefined);
      return { status: 'refused', delivery_id: deliveryId, feature_slug: slug, transition, violations };
    }
    const updated = await this.workflow.getFeature(slug);
    await this.saveLink('tracker', slug, this.localContent('tracker', updated), remote);
    return { status: 'transitioned', delivery_id: deliveryId, feature_slug: slug, transition };
  }
}

/** The comment a refused tracker state change leaves on the issue. */
export function refusalComment(slug: string, from: FeatureState, to: FeatureState, remoteState: string, violations: Violation[]): string {
  return [
    `Switchyard did not move feature \`${slug}\` from ${from} to ${to} (tracker state "${remoteState}"):`,
    '',
    ...violations.map((v) => `- **${v.rule_id}**: ${v.message}. ${v.remediation}`),
    '',
    `The feature stays ${from}. Fix the above and set the state again.`,
  ].join('\n');
}
