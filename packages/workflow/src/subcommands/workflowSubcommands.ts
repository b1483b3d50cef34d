/**
 * @module workflowSubcommands
 * The artifact, governance and audit subcommands.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { createNoteSigner, createNoteVerifier, type NoteVerifier, type TrustedState } from '@switchyard/audit-chain';
import { z } from 'zod';
import type { AuditTrailEntry } from '../domain/model.js';
import { InvalidArgumentError, NotFoundError, WorkflowError } from '../errors.js';
import { confinedPath } from '../git/safety.js';
import {
  arg,
  artifactContent,
  defineSubcommand,
  legacySubcommand,
  readRepositoryFile,
  type SubcommandContext,
  type SubcommandDefinition,
} from './registry.js';

const relativePath = () => arg.text('path inside the feature, e.g. spec.md');

/** `governance:check` before the specification's arguments: `--to` optional (default the next move). */
const governanceCheckV1 = defineSubcommand({
  name: 'governance:check',
  summary: 'Check the gates of the next move (of the feature, or of a work package with --wp)',
  args: z.object({
    feature_slug: arg.slug(),
    wp: arg.int('work-package sequence').optional(),
    to: arg.text('target state (default: the next one)').optional(),
  }),
  run: (ctx, a) =>
    ctx.workflow.checkGovernance(a.feature_slug, {
      ...(a.wp !== undefined ? { wp_sequence: a.wp } : {}),
      ...(a.to !== undefined ? { to: a.to } : {}),
    }),
});

/** `governance:enforce` before the specification's arguments: a rule's global setting. */
const governanceEnforceV1 = defineSubcommand({
  name: 'governance:enforce',
  summary: 'Enable, disable or reset a rule for every feature (admins only; audited)',
  args: z.object({ rule_id: arg.text('rule id'), action: z.enum(['enable', 'disable', 'reset']).describe('what to do') }),
  run: (ctx, a) => ctx.workflow.governance.enforce(a.rule_id, a.action, ctx.actor),
});

/**
 * Refuses a feature that does not exist (not_found), as audit:* and HTTP do: artifacts
 * are files under `<slug>/`, so without this a typo in the slug would silently create or
 * read a directory for a feature nobody specified. Checked before standard input is read.
 */
async function requireFeature(ctx: SubcommandContext, featureSlug: string): Promise<void> {
  await ctx.workflow.getFeature(featureSlug);
}

/** Key, checkpoint and trusted-state files are small; a bound stops a large file being read whole. */
const TRUST_FILE_MAX_BYTES = 64 * 1024;

/** Environment variables `audit:checkpoint --key-env` may name: the operator's, not any secret of the process. */
const KEY_ENV = /^YARD_CHECKPOINT_KEY[A-Z0-9_]*$/;

/** The environment variable naming the operator's trust directory (see {@link readTrustFile}). */
export const TRUST_DIR_ENV = 'YARD_TRUST_DIR';

/**
 * Reads a key, checkpoint or trusted state. A relative path is confined to the repository, as
 * before. An absolute path must lie in the operator's trust directory (`YARD_TRUST_DIR`, set in
 * the server's or CLI's environment, where a caller cannot choose it): what anchors the log (the
 * signing key, the last trusted state) belongs outside the reach of the agent whose actions the
 * log records, which works inside the repository; and a caller must not make the server read any
 * file it likes (`/etc/shadow` stays `path_escape`). There, only a regular file of at most 64 KiB
 * is read, never through a symlink in its last component, and no error repeats its content.
 */
async function readTrustFile(ctx: SubcommandContext, path: string, field: string): Promise<Buffer> {
  if (!isAbsolute(path)) return readRepositoryFile(ctx, path, field);
  const trustDir = ctx.env?.[TRUST_DIR_ENV];
  if (trustDir === undefined || trustDir.length === 0 || !isAbsolute(trustDir)) {
    throw new WorkflowError('path_escape', `${field}: ${JSON.stringify(path)} is outside the repository, and ${TRUST_DIR_ENV} is not set`, {
      details: { field },
    });
  }
  const file = await confinedPath(trustDir, path, field);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new NotFoundError(field, path);
    throw new InvalidArgumentError(field, `cannot be read (${code ?? 'error'})`);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new InvalidArgumentError(field, 'is not a regular file');
    if (stats.size > TRUST_FILE_MAX_BYTES) throw new InvalidArgumentError(field, `is larger than ${TRUST_FILE_MAX_BYTES} bytes`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The PEM signing key of `audit:checkpoint`: a file (see {@link readTrustFile}) or an environment variable. */
async function checkpointKey(
  ctx: SubcommandContext,
  a: { key_file?: string | undefined; key_env?: string | undefined },
): Promise<string | undefined> {
  if (a.key_file !== undefined && a.key_env !== undefined) throw new InvalidArgumentError('key_env', 'give key_file or key_env, not both');
  if (a.key_file !== undefined) return (await readTrustFile(ctx, a.key_file, 'key_file')).toString('utf8');
  if (a.key_env === undefined) return undefined;
  if (!KEY_ENV.test(a.key_env)) throw new InvalidArgumentError('key_env', 'must name a YARD_CHECKPOINT_KEY* variable');
  const pem = ctx.env?.[a.key_env];
  if (pem === undefined || pem.length === 0) throw new NotFoundError('key_env', a.key_env);
  return pem;
}

/** What `audit:verify` checks the chain against, beyond itself. */
async function verifyAnchors(
  ctx: SubcommandContext,
  a: { checkpoint_file?: string | undefined; public_key?: string | undefined; trusted_state?: string | undefined },
): Promise<{ checkpoint?: string; verifiers?: NoteVerifier[]; trustedState?: TrustedState }> {
  const anchors: { checkpoint?: string; verifiers?: NoteVerifier[]; trustedState?: TrustedState } = {};
  if (a.checkpoint_file !== undefined) {
    if (a.public_key === undefined) throw new InvalidArgumentError('public_key', 'required with checkpoint_file, to check its signature');
    anchors.checkpoint = (await readTrustFile(ctx, a.checkpoint_file, 'checkpoint_file')).toString('utf8');
  }
  if (a.public_key !== undefined) {
    // A C2SP verifier key `<name>+<keyid>+<key>` as text, or a .vkey file holding one.
    const text = /^[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/.test(a.public_key)
      ? a.public_key
      : (await readTrustFile(ctx, a.public_key, 'public_key')).toString('utf8').trim();
    try {
      anchors.verifiers = [createNoteVerifier(text)];
    } catch {
      throw new InvalidArgumentError('public_key', 'is not a C2SP verifier key (<name>+<keyid>+<key>)');
    }
  }
  if (a.trusted_state !== undefined) {
    let state: Partial<TrustedState>;
    try {
      state = JSON.parse((await readTrustFile(ctx, a.trusted_state, 'trusted_state')).toString('utf8'));
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof InvalidArgumentError) throw error;
      throw new InvalidArgumentError('trusted_state', 'is not JSON {origin, size, root}');
    }
    if (typeof state?.origin !== 'string' || !Number.isSafeInteger(state.size) || typeof state.root !== 'string') {
      throw new InvalidArgumentError('trusted_state', 'is not JSON {origin, size, root}');
    }
    anchors.trustedState = { origin: state.origin, size: state.size as number, root: state.root };
  }
  return anchors;
}

export const WORKFLOW_SUBCOMMANDS: SubcommandDefinition[] = [
  defineSubcommand({
    name: 'artifact:write',
    documented: true,
    summary: 'Write an artifact (content, from_file, or standard input)',
    args: z.object({
      feature_slug: arg.slug(),
      relative_path: relativePath(),
      content: z.string().describe('the content').optional(),
      from_file: arg.text('read the content from this file in the repository').optional(),
    }),
    run: async (ctx, a) => {
      await requireFeature(ctx, a.feature_slug);
      return ctx.artifacts.write(a.feature_slug, a.relative_path, await artifactContent(ctx, a));
    },
  }),
  defineSubcommand({
    name: 'artifact:read',
    documented: true,
    summary: 'Read an artifact',
    args: z.object({ feature_slug: arg.slug(), relative_path: relativePath() }),
    run: async (ctx, a) => {
      await requireFeature(ctx, a.feature_slug);
      const { content, artifact } = await ctx.artifacts.read(a.feature_slug, a.relative_path);
      return { ...artifact, content: content.toString('utf8') };
    },
  }),
  defineSubcommand({
    name: 'artifact:hash',
    documented: true,
    summary: 'Hash of an artifact: {path, hash, size_bytes}',
    args: z.object({ feature_slug: arg.slug(), relative_path: relativePath() }),
    run: async (ctx, a) => {
      await requireFeature(ctx, a.feature_slug);
      return ctx.artifacts.hash(a.feature_slug, a.relative_path);
    },
  }),
  defineSubcommand({
    name: 'artifact:list',
    summary: 'Artifacts of a feature',
    args: z.object({ feature_slug: arg.slug() }),
    run: async (ctx, a) => {
      await requireFeature(ctx, a.feature_slug);
      return ctx.artifacts.list(a.feature_slug);
    },
  }),
  defineSubcommand({
    name: 'artifact:verify',
    summary: 'Compare an artifact with an expected hash',
    args: z.object({ feature_slug: arg.slug(), relative_path: relativePath(), hash: arg.text('expected sha256:<hex>') }),
    run: async (ctx, a) => {
      await requireFeature(ctx, a.feature_slug);
      return ctx.artifacts.verify(a.feature_slug, a.relative_path, a.hash);
    },
  }),
  defineSubcommand({
    name: 'artifact:delete',
    summary: 'Delete an artifact',
    args: z.object({ feature_slug: arg.slug(), relative_path: relativePath() }),
    run: async (ctx, a) => {
      await requireFeature(ctx, a.feature_slug);
      return ctx.artifacts.remove(a.feature_slug, a.relative_path);
    },
  }),
  defineSubcommand({
    name: 'governance:check',
    documented: true,
    summary: 'Check the gates of a move to --transition (of the feature, or of a work package with --wp)',
    args: z.object({
      feature_slug: arg.slug(),
      transition: arg.text('target state, e.g. REVIEW'),
      wp: arg.int('work-package sequence').optional(),
      verbose: arg.bool('also list the rules that were checked (checked_rules)').default(false),
    }),
    aliases: { to: 'transition' },
    run: (ctx, a) =>
      ctx.workflow.checkGovernance(a.feature_slug, {
        to: a.transition,
        verbose: a.verbose,
        ...(a.wp !== undefined ? { wp_sequence: a.wp } : {}),
      }),
  }),
  legacySubcommand(governanceCheckV1, 'governance:check --transition <state>'),
  defineSubcommand({
    name: 'governance:enforce',
    documented: true,
    summary: 'Enable, disable or reset (to the global setting) a rule for one feature (admins only; audited)',
    args: z.object({
      feature_slug: arg.slug(),
      rule: arg.text('rule id'),
      action: z.enum(['enable', 'disable', 'reset']).describe('enable, disable, or reset to the global setting'),
    }),
    aliases: { rule_id: 'rule' },
    run: (ctx, a) => ctx.workflow.governance.enforceForFeature(a.feature_slug, a.rule, a.action, ctx.actor),
  }),
  legacySubcommand(governanceEnforceV1, 'governance:enforce --feature-slug F --rule R (per feature)'),
  defineSubcommand({
    name: 'governance:show',
    summary: 'One governance rule',
    args: z.object({ rule_id: arg.text('rule id') }),
    run: async (ctx, a) => {
      const rule = (await ctx.workflow.governance.listRules()).find((r) => r.rule_id === a.rule_id);
      if (!rule) throw new NotFoundError('governance rule', a.rule_id);
      return rule;
    },
  }),
  defineSubcommand({
    name: 'governance:list',
    summary: 'Governance rules and whether they are enabled',
    args: z.object({}),
    run: (ctx) => ctx.workflow.governance.listRules(),
  }),
  defineSubcommand({
    name: 'governance:define',
    summary: 'Define a custom rule (admins only; audited)',
    args: z.object({
      rule_id: arg.text('rule id'),
      transition: arg.text('guarded transition, e.g. "DOING -> REVIEW"'),
      scope: z.enum(['feature', 'work_package']).describe('what the rule guards'),
      domain: z.enum(['security', 'quality', 'compliance', 'performance', 'custom']).default('custom').describe('policy domain'),
      required_evidence: arg.list('evidence types required').default([]),
      min: z.string().describe('thresholds as metric=value, comma separated (minimums)').optional(),
      max: z.string().describe('thresholds as metric=value, comma separated (maximums)').optional(),
      description: z.string().default('').describe('what the rule is for'),
      remediation: z.string().default('').describe('what to do when it fails'),
    }),
    run: (ctx, a) => {
      const thresholds = [
        ...parseBounds(a.min, 'min').map(([metric, value]) => ({ metric, min: value })),
        ...parseBounds(a.max, 'max').map(([metric, value]) => ({ metric, max: value })),
      ];
      return ctx.workflow.governance.defineRule(
        { ...a, required_evidence: a.required_evidence as never, thresholds, transition: a.transition, scope: a.scope },
        ctx.actor,
      );
    },
  }),
  defineSubcommand({
    name: 'audit:log',
    documented: true,
    summary: "A feature's audit entries (newest --limit, default 50; --actor: only that actor's)",
    args: z.object({
      feature_slug: arg.slug(),
      actor: arg.text('only entries by this actor').optional(),
      since: arg.text('only entries at or after this RFC 3339 time').optional(),
      limit: arg.int('how many of the newest').min(1).default(50),
      output: z.enum(['json', 'table', 'markdown']).describe('how the CLI prints it (the result is the same entries)').optional(),
    }),
    run: async (ctx, a) => {
      // An unknown feature is not_found here as on HTTP and gRPC, not an empty trail.
      await ctx.workflow.getFeature(a.feature_slug);
      const since = a.since !== undefined ? { since: a.since } : {};
      let entries: AuditTrailEntry[];
      if (a.actor === undefined) entries = await ctx.workflow.audit.entries(a.feature_slug, { limit: a.limit, ...since });
      else {
        const mine = (await ctx.workflow.audit.entries(a.feature_slug, since)).filter((e) => e.actor === a.actor);
        entries = mine.slice(Math.max(0, mine.length - a.limit));
      }
      // The dispatch tool answers JSON: a table or markdown is the rendered text (the CLI renders its own --output).
      if (a.output === undefined || a.output === 'json') return entries;
      return { output: a.output, count: entries.length, text: renderAuditEntries(entries, a.output) };
    },
  }),
  defineSubcommand({
    name: 'audit:query',
    documented: true,
    summary: 'Query audit entries (--where, --group-by, --order-by)',
    args: z.object({
      feature_slug: arg.slug().optional(),
      where: z.string().describe('filter, e.g. "actor = alice AND to = DONE"').optional(),
      group_by: z.string().describe('fields to group by, with counts').optional(),
      order_by: z.string().describe('fields with asc/desc').optional(),
      limit: arg.int('at most this many rows').optional(),
    }),
    run: async (ctx, a) => {
      if (a.feature_slug !== undefined) await ctx.workflow.getFeature(a.feature_slug);
      return ctx.workflow.audit.query(a.feature_slug, {
        ...(a.where !== undefined ? { where: a.where } : {}),
        ...(a.group_by !== undefined ? { groupBy: a.group_by } : {}),
        ...(a.order_by !== undefined ? { orderBy: a.order_by } : {}),
        ...(a.limit !== undefined ? { limit: a.limit } : {}),
      });
    },
  }),
  defineSubcommand({
    name: 'audit:verify',
    documented: true,
    summary: "Verify a feature's audit chain (against a signed checkpoint or a trusted state kept outside the repository)",
    args: z.object({
      feature_slug: arg.slug(),
      checkpoint_file: arg
        .text('a signed checkpoint note the chain must match (an absolute path in YARD_TRUST_DIR, or in the repository)')
        .optional(),
      public_key: arg.text('the verifier key trusted to sign checkpoints: <name>+<keyid>+<key>, or a .vkey file').optional(),
      trusted_state: arg.text('JSON {origin, size, root} from an earlier checkpoint, kept in YARD_TRUST_DIR').optional(),
    }),
    run: async (ctx, a) => {
      await ctx.workflow.getFeature(a.feature_slug);
      return ctx.workflow.audit.verify(a.feature_slug, await verifyAnchors(ctx, a));
    },
  }),
  defineSubcommand({
    name: 'audit:export',
    summary: "A feature's audit chain as JSONL (for audit-chain verify)",
    args: z.object({ feature_slug: arg.slug() }),
    run: async (ctx, a) => {
      await ctx.workflow.getFeature(a.feature_slug);
      return { origin: ctx.workflow.audit.origin(a.feature_slug), jsonl: await ctx.workflow.audit.exportJsonl(a.feature_slug) };
    },
  }),
  defineSubcommand({
    name: 'audit:checkpoint',
    summary: 'The head of a chain (size, Merkle root), signed as a C2SP note when a key is given',
    args: z.object({
      feature_slug: arg.slug(),
      key_file: arg.text('Ed25519 private key (PEM): a path in the repository, or an absolute path in YARD_TRUST_DIR').optional(),
      key_env: arg.text('an environment variable YARD_CHECKPOINT_KEY* holding the private key (PEM)').optional(),
      key_name: arg.text('key name for the signature').optional(),
    }),
    run: async (ctx, a) => {
      await ctx.workflow.getFeature(a.feature_slug);
      const log = ctx.workflow.audit.log(a.feature_slug);
      const pem = await checkpointKey(ctx, a);
      const head = await log.head();
      const base = { origin: log.origin, size: head.size, root: head.root };
      if (pem === undefined) return { ...base, note: null };
      if (a.key_name === undefined)
        throw new InvalidArgumentError('key_name', `required with ${a.key_file !== undefined ? 'key_file' : 'key_env'}`);
      return { ...base, note: await log.checkpoint(createNoteSigner(a.key_name, pem)) };
    },
  }),
  defineSubcommand({
    name: 'audit:chains',
    summary: 'Chains in the store (one per feature, plus _governance)',
    args: z.object({}),
    run: async (ctx) => (await ctx.workflow.store.auditChains()).map((chain) => ({ chain, origin: ctx.workflow.audit.origin(chain) })),
  }),
];

const AUDIT_COLUMNS = ['id', 'timestamp', 'actor', 'wp_sequence', 'transition', 'action'] as const;

/** Audit entries as a plain-text table or a markdown table, one row per entry. */
function renderAuditEntries(entries: readonly AuditTrailEntry[], format: 'table' | 'markdown'): string {
  const rows = entries.map((e) =>
    AUDIT_COLUMNS.map((c) => {
      const v = (e as unknown as Record<string, unknown>)[c];
      return v === null || v === undefined ? '' : String(v).replace(/\r?\n/g, ' ');
    }),
  );
  if (format === 'markdown') {
    const esc = (t: string) => t.replace(/\|/g, '\\|');
    const line = (cells: readonly string[]) => `| ${cells.map(esc).join(' | ')} |`;
    return `${[line(AUDIT_COLUMNS), line(AUDIT_COLUMNS.map(() => '---')), ...rows.map(line)].join('\n')}\n`;
  }
  const widths = AUDIT_COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((t, i) => t.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(AUDIT_COLUMNS), ...rows.map(line)].join('\n')}\n`;
}

function parseBounds(text: string | undefined, field: string): [string, number][] {
  if (text === undefined) return [];
  return text.split(',').map((part) => {
    const [metric, value] = part.split('=').map((s) => s.trim());
    const n = Number(value);
    if (!metric || value === undefined || !Number.isFinite(n))
      throw new InvalidArgumentError(field, `expected metric=value, got ${JSON.stringify(part)}`);
    return [metric, n];
  });
}
