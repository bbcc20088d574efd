// Checks before a batch is stored: the session is not deleted (unless its host already pushes to it) and the quota allows it.
import type { BlobStore } from './store/blob-store.js';
import { checkQuota } from './quota.js';
import { findTombstone, goneSession } from './session-delete.js';

/**
 * Throws 410 for a deleted session (an old copy on another machine must not bring it back) and 413 over quota.
 * The tombstone is looked up only when this host has no head in the session: a deletion removes the heads, so
 * every push after it lands here, while the common push of a live session costs no extra request.
 * `sessionHosts` is how many hosts have heads in the session when the caller listed them all (null when it listed
 * only its host's): the quota's new-session question is then answered without another listing (see checkQuota).
 * The tombstone and the quota are looked up together. Returns what to run once the batch is stored (the usage counter).
 */
export async function guardPush(store: BlobStore, account: string, session: string, o: { hostHasHead: boolean; bodyBytes: number; sessionHosts: number | null }): Promise<(created: boolean) => Promise<void>> {
  const [tomb, quota] = await Promise.allSettled([
    o.hostHasHead ? null : findTombstone(store, account, session),
    checkQuota(store, account, { bodyBytes: () => o.bodyBytes, session, hostHasHead: o.hostHasHead, sessionHosts: o.sessionHosts }),
  ]);
  // A deleted session answers 410 before any quota question, as when the two were looked up one after the other.
  if (tomb.status === 'rejected') throw tomb.reason;
  if (tomb.value) throw goneSession(tomb.value);
  if (quota.status === 'rejected') throw quota.reason;
  return quota.value ?? (async () => {});
}
