// `sessync restore`: which sessions deleted here a run brings back, and the fetch of each from its first batch.
import type { SyncOp } from '../../shared/sync-plan.js';
import type { Head } from '../../shared/wire.js';
import type { DroppedSession } from './dropped.js';
import type { SessionSyncState } from './session-sync-state.js';
import { nullRecord, toNullRecord } from '../../shared/own-keys.js';

/**
 * The run's ops with each named session deleted here (in `only`; every one when the run names none) fetched whole:
 * every host's batches, this machine's own too (a sync never pulls those back: they went with the file, and a
 * session only this machine pushed would have nothing to fetch). The sessions not named stay dropped, their state
 * untouched, so sync still leaves them deleted. A session the server holds no batch of cannot come back: it stays.
 */
export function restorePlan(planned: readonly SyncOp[], dropped: ReadonlyMap<string, DroppedSession>, only: ReadonlySet<string> | undefined, heads: readonly Head[]): { planned: SyncOp[]; dropped: Map<string, DroppedSession> } {
  const batches = new Map<string, number>();
  for (const h of heads) if (dropped.has(h.session)) batches.set(h.session, (batches.get(h.session) ?? 0) + h.seq);
  const restored = new Set([...dropped.keys()].filter((s) => (only === undefined || only.has(s)) && (batches.get(s) ?? 0) > 0));
  const ops: SyncOp[] = planned.filter((x) => !restored.has(x.session));
  for (const s of restored) ops.push({ kind: 'fetch', session: s, batches: batches.get(s)!, fromStart: true });
  return { planned: ops, dropped: new Map([...dropped].filter(([s]) => !restored.has(s))) };
}

/**
 * A dropped session's state as a restore's pull starts from: what it says this machine had (cursors, pushed offset,
 * ids to skip, the pending batch, the old file's tail hash) went with the file. Its next seq stays: this host's seqs
 * never go back, and the pull raises it past the own batches it brings. Only in memory until the pull saves it with
 * the new file, so a restore that fails before leaves the session deleted here, and restore can be run again.
 */
export function startedOver(st: SessionSyncState): SessionSyncState {
  const { tail: _, ...rest } = st;
  return { ...rest, cursor: nullRecord(), pushedOffset: 0, skipIds: [], pending: null };
}

/**
 * What a restore writes down before its first page: the old state with every host's cursor at 0 and this host named
 * in it. Kept, the old offsets still describe a file restored byte for byte (nothing pushed again); a file that is not
 * (cut short, or another order) fails their check and is pushed again, merged by id. The cursor makes the next run
 * pull every host's batches again, this one's too (sync-plan counts this host's while the cursor names it), and keeps
 * the session deleted here if the restore failed before its file was made.
 */
export function restoreMark(st: SessionSyncState, ownHost: string): SessionSyncState {
  return { ...st, cursor: toNullRecord({ [ownHost]: 0 }) };
}

/** Batches a restore of `session` fetches: every host's, this machine's own too (what `status` shows as restoreBatches). */
export function restoreBatchCount(heads: readonly Head[], session: string): number {
  let n = 0;
  for (const h of heads) if (h.session === session) n += h.seq;
  return n;
}
