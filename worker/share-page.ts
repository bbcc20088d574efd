// What one page of GET /v1/shares may do inside its store-call budget: which entries it answers, and which dead shares it purges.
import { hashIn } from './share-salvage.js';
import { isDamagedRead, type DamagedRead, type ShareIndexRecord } from './share-records.js';

/** Store calls a purge of a dead share costs: its record's tombstone and its entry's removal, and its session pointer's. */
export function purgeOps(r: ShareIndexRecord): number {
  return r.session === undefined ? 2 : 3;
}

/** The most a purge costs: a page's budget past its reads must hold one, so a page always gets past its first entry. */
export const MAX_PURGE_OPS = 3;

export function isDeadShare(r: ShareIndexRecord, now: number): boolean {
  return r.revoked || !(Date.parse(r.expiresAt) > now);
}

/**
 * Walks a page's entries in key order with `extra` calls past their reads: a damaged entry whose bytes name a hash
 * costs the read of its share record (see shareOfDamagedRecord), a dead share its purge. A damaged entry past the
 * budget ends the page before it (the next page has it, to be listed). A dead share past the budget is left out and
 * purged by a later list, unless this page has purged none yet: then the page ends before it too, so the next page
 * starts at it with the whole budget. Else salvage reads before it, which every list makes again (a damaged entry
 * stays until its owner revokes it), could leave its page no room for any purge, ever.
 * `end`: how many entries the page answers; `purge`: the dead shares it purges, all within them.
 */
export function planSharesPage(read: readonly { rec: ShareIndexRecord | DamagedRead | null }[], extra: number, now: number): { end: number; purge: ShareIndexRecord[] } {
  const purge: ShareIndexRecord[] = [];
  for (let i = 0; i < read.length; i++) {
    const rec = read[i]!.rec;
    if (rec === null) continue;
    if (isDamagedRead(rec)) {
      const cost = hashIn(rec.damaged) !== undefined ? 1 : 0;
      if (cost > extra) return { end: i, purge };
      extra -= cost;
    } else if (isDeadShare(rec, now)) {
      const cost = purgeOps(rec);
      if (cost <= extra) {
        extra -= cost;
        purge.push(rec);
      } else if (purge.length === 0) {
        return { end: i, purge };
      }
    }
  }
  return { end: read.length, purge };
}
