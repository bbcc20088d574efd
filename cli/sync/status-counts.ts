// The counts `status` gives of its rows: sessions with something to push, and sessions the next sync pulls into.
import type { StatusRow } from './sync-status.js';

/** Sessions here with entries (or a batch, or a header) the server has not acknowledged; deleted-on-server ones are not pushed. */
export function toPushCount(rows: readonly StatusRow[]): number {
  return rows.filter((s) => !s.remoteOnly && !s.deletedOnServer && ((s.unpushedEntries ?? 0) > 0 || s.pendingBatch || s.notOnServer)).length;
}

/** Sessions the next sync pulls entries into: one deleted here is left deleted by sync (`restore` brings it back). */
export function toPullCount(rows: readonly StatusRow[]): number {
  return rows.filter((s) => !s.deletedHere && (s.waitingBatches ?? 0) > 0).length;
}

/** `status --json`'s counts, as the text gives them: null where it says "not checked" (logged out, server away). */
export function statusCounts(r: { loggedIn: boolean; server: string | null; serverError?: unknown; sessions: readonly StatusRow[] }): { toPush: number | null; toPull: number | null } {
  const unasked = !r.server || (r.serverError !== undefined && r.sessions.every((s) => s.waitingBatches === null));
  return { toPush: r.loggedIn ? toPushCount(r.sessions) : null, toPull: unasked ? null : toPullCount(r.sessions) };
}
