/**
 * The main suite's smoke row of the coding-agent matrix: the real Claude
 * Code (`@anthropic-ai/claude-code`, the fastest of the five CLIs to start)
 * headless through the gateway against each upstream family. Each turn
 * streams a thinking block, a Bash call and the final text
 * (agents/agentCell.ts); `claude -p /context` has Claude Code count its
 * context with `/v1/messages/count_tokens`, which the gateway forwards to an
 * Anthropic upstream, turns into `:countTokens` for Gemini, and estimates
 * for the OpenAI families. The other CLIs run in agentMatrix.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { requireAgentCli } from '@switchyard/test-support';
import { assertAgentCell, runAgentTurn } from './agents/agentCell.js';
import { AGENT_CLIENTS } from './agents/clients.js';
import { FAMILIES, type Family } from './agents/scriptedUpstream.js';

const claude = requireAgentCli('claude');
const client = AGENT_CLIENTS.claude;
const scratch = await mkdtemp(join(tmpdir(), 'claude-code-'));
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await rm(scratch, { recursive: true, force: true });
});

/** The upstream path a token count reaches, per family; the OpenAI families have none (the gateway estimates). */
const UPSTREAM_COUNT: Record<Family, RegExp | undefined> = {
  'openai-chat': undefined,
  'openai-responses': undefined,
  anthropic: /\/v1\/messages\/count_tokens$/,
  gemini: /:countTokens$/,
};

describe(`Claude Code ${claude.available ? claude.version : ''} through the gateway`, { skip: claude.skip }, () => {
  for (const family of FAMILIES) {
    test(`${family} upstream: thinks, runs Bash, the output goes upstream, the final text is printed`, async (t) => {
      const { offLoopback } = await assertAgentCell(client, family, scratch, cleanups);
      if (offLoopback.length > 0) t.diagnostic(`refused off-loopback: ${[...new Set(offLoopback)].join(', ')}`);
    });

    test(`${family} upstream: /context counts tokens through /v1/messages/count_tokens`, async () => {
      const { run, upstream, served, transcript } = await runAgentTurn(client, family, scratch, cleanups, '/context');
      assert.equal(run.code, 0, transcript);
      assert.match(run.stdout, /Context Usage/, transcript);
      // The gateway answered each count (Claude Code falls back to its own estimate on an error, so look at the gateway).
      assert.ok(served.length > 0, transcript);
      assert.deepEqual(new Set(served.map((s) => s.httpStatus)), new Set([200]), JSON.stringify(served));
      // /context generates nothing: every request that reached the upstream is a token count.
      const paths = upstream.requests.map((r) => r.path);
      const expected = UPSTREAM_COUNT[family];
      if (expected === undefined) assert.deepEqual(paths, [], transcript);
      else {
        assert.ok(paths.length > 0, transcript);
        for (const path of paths) assert.match(path, expected, transcript);
      }
    });
  }
});
