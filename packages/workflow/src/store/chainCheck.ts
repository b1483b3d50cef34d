/**
 * @module chainCheck
 * Checks shared by the store adapters when they append audit entries
 * inside their own transactions.
 */
import type { ChainHead, SealedEntry } from '@switchyard/audit-chain';
import { WorkflowError } from '../errors.js';

/** Throws unless `sealed` continues `head` exactly (ids and links), so a stale builder never forks a chain. */
export function assertContinuesHead(head: ChainHead, sealed: readonly SealedEntry[]): void {
  let id = head.size + 1;
  let prev = head.hash;
  for (const { entry } of sealed) {
    if (entry.id !== id || (prev !== null && entry.prev_hash !== prev)) {
      throw new WorkflowError('store_failed', `audit entry ${entry.id} does not continue the chain head (expected id ${id})`);
    }
    id++;
    prev = entry.hash;
  }
}

/** Chain names are feature slugs or `_`-prefixed system chains. */
export function assertChainName(chain: string): void {
  if (!/^[a-z0-9_][a-z0-9_-]{0,63}$/.test(chain))
    throw new WorkflowError('invalid_argument', `bad audit chain name ${JSON.stringify(chain)}`, { details: { field: 'chain' } });
}
