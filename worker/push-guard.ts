// Checks before a batch is stored: the session is not deleted (unless its host already pushes to it) and the quota allows it.
import type { BlobStore } from './store/blob-store.js';
import { checkQuota } from './quota.js';
import { sessionHeads } from './session-data.js';
import { findTombstone, goneSession } from './session-delete.js';

/**
 * Throws 410 for a deleted session (an old copy on another machine must not bring it back) and 413 over quota.
 * The tombstone is looked up only when this host has no head in the session: a deletion removes the heads, so
 * every push after it lands here, while the common push of a live session costs no extra request.
 * Returns what to run once the batch is stored (the usage counter).
 */
export async function guardPush(store: BlobStore, account: string, session: string, o: { hostHasHead: boolean; bodyBytes: number }): Promise<(created: boolean) => Promise<void>> {
  const tomb = o.hostHasHead ? null : await findTombstone(store, account, session);
  if (tomb) throw goneSession(tomb);
  const commit = await checkQuota(store, account, { bodyBytes: o.bodyBytes, newSession: async () => (await sessionHeads(store, account, session)).size === 0 });
  return commit ?? (async () => {});
}
