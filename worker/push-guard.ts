// Checks before a batch is stored: the session is not deleted (unless its host already pushes to it), and the quota's reads.
import type { BlobStore } from './store/blob-store.js';
import { readQuotaGate, type QuotaGate } from './quota.js';
import { findTombstone, goneSession } from './session-delete.js';

/**
 * Throws 410 for a deleted session (an old copy on another machine must not bring it back), and reads what the
 * quota needs; returns the quota's gate, which the caller passes the batch through once its other checks are done
 * (413 over quota, see readQuotaGate). The tombstone is looked up only when this host has no head in the session: a
 * deletion removes the heads, so every push after it lands here, while the common push of a live session costs no
 * extra request. `sessionHosts` is how many hosts have heads in the session when the caller listed them all (null
 * when it listed only its host's): the quota's new-session question is then answered without another listing.
 * The tombstone and the quota are looked up together.
 */
export async function guardPush(store: BlobStore, account: string, session: string, o: { hostHasHead: boolean; sessionHosts: number | null }): Promise<QuotaGate> {
  const [tomb, quota] = await Promise.allSettled([o.hostHasHead ? null : findTombstone(store, account, session), readQuotaGate(store, account, { session, ...o })]);
  // A deleted session answers 410 before any quota question, as when the two were looked up one after the other.
  if (tomb.status === 'rejected') throw tomb.reason;
  if (tomb.value) throw goneSession(tomb.value);
  if (quota.status === 'rejected') throw quota.reason;
  return quota.value ?? noQuota;
}

/** The gate of an account without a quota: every batch passes, and nothing is counted. */
const noQuota: QuotaGate = () => async () => {};
