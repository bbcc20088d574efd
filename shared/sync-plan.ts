// Sync as pure steps: local and remote status -> per-session diff -> list of operations. No I/O here: table-tested.
import type { Cursor, Head } from './wire.js';
import { nullRecord, ownValue } from './own-keys.js';

/** What the client knows about one local session without reading it: file size and its sync state. */
export interface LocalStatus {
  session: string;
  /** Current size of the session file in bytes. */
  size: number;
  /** Bytes of the file already pushed (0 = never). */
  pushedOffset: number;
  /** Seq of a batch written to state but not yet acknowledged by the server, or null. */
  pendingSeq: number | null;
  /** Per-host cursor of batches already merged into the local file. */
  cursor: Cursor;
  /** Next seq this host will use for the session. */
  nextSeq: number;
}

export interface SessionDiff {
  session: string;
  local: boolean;
  remote: boolean;
  /** Bytes of the local file after the pushed offset (lines not yet pushed, or pulled ones not yet accounted). */
  unpushedBytes: number;
  /** A batch awaits its acknowledgement: it is resent with the same seq and batch id. */
  pending: boolean;
  /** The file is smaller than the pushed offset: it was rewritten, and the push starts over (merged by id). */
  shrunk: boolean;
  /** Per other host: batches on the server the local file lacks (a null-prototype record: host ids are user input). */
  waiting: Record<string, number>;
  waitingBatches: number;
  /** Highest seq the server holds from this host (0 = none): detects state older than the server's. */
  ownHead: number;
  /**
   * The server holds fewer of this host's batches than the local state says were acknowledged (restored from a
   * backup, or data lost): what the state calls pushed may be missing there, so the session is pushed again.
   */
  serverBehind: boolean;
}

export type SyncOp =
  /** resetTo: the server lost batches of ours; push the whole file again from this seq (merged by id, no duplicates). */
  | { kind: 'push'; session: string; resumePending: boolean; resetTo?: number }
  | { kind: 'pull'; session: string; batches: number }
  /**
   * A session the server has and this machine lacks: create the local file, then pull. fromStart (restore): every
   * host's batches, this one's too, whatever the state says this machine had.
   */
  | { kind: 'fetch'; session: string; batches: number; fromStart?: true };

export interface PlanOptions {
  push: boolean;
  pull: boolean;
  /** Fetch sessions that exist only on the server (pull/sync without a ref: the caller filters by project). */
  fetchRemoteOnly: boolean;
  /** Only these sessions (a ref or this project); undefined = every local session. */
  only?: ReadonlySet<string>;
  /** The heads were fetched (default true): without them ownHead is unknown and serverBehind means nothing. */
  headsKnown?: boolean;
}

/**
 * The seq `cursor` holds for `host`, 0 when none. Own keys only: host ids are user input, and a host named
 * `constructor` or `toString` must not read Object.prototype's function (that hid its batches for good).
 */
export function cursorSeq(cursor: Readonly<Cursor>, host: string): number {
  return ownValue(cursor, host) ?? 0;
}

/** Groups heads by session: session -> host -> highest seq. Maps: session and host ids are user input. */
export function headsBySession(heads: readonly Head[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const h of heads) {
    let m = out.get(h.session);
    if (!m) out.set(h.session, (m = new Map()));
    m.set(h.host, Math.max(m.get(h.host) ?? 0, h.seq));
  }
  return out;
}

/** Compares local state with the server's heads, one row per session known on either side. */
export function diffSessions(local: readonly LocalStatus[], heads: readonly Head[], ownHost: string): SessionDiff[] {
  const remote = headsBySession(heads);
  const rows: SessionDiff[] = [];
  const seen = new Set<string>();
  for (const l of local) {
    seen.add(l.session);
    const r = remote.get(l.session);
    rows.push(row(l.session, l, r, ownHost));
  }
  for (const [session, r] of remote) if (!seen.has(session)) rows.push(row(session, undefined, r, ownHost));
  return rows.sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
}

function row(session: string, l: LocalStatus | undefined, r: ReadonlyMap<string, number> | undefined, ownHost: string): SessionDiff {
  const waiting = nullRecord<number>();
  let waitingBatches = 0;
  for (const [host, seq] of r ?? []) {
    // This host's batches are in the file already, unless a restore cut short left this host in the cursor.
    if (host === ownHost && !(l && Object.hasOwn(l.cursor, ownHost))) continue;
    const have = l ? cursorSeq(l.cursor, host) : 0;
    if (seq > have) {
      waiting[host] = seq - have;
      waitingBatches += seq - have;
    }
  }
  return {
    session,
    local: l !== undefined,
    remote: r !== undefined,
    unpushedBytes: l ? Math.max(0, l.size - l.pushedOffset) : 0,
    pending: l?.pendingSeq != null,
    shrunk: l ? l.size < l.pushedOffset : false,
    waiting,
    waitingBatches,
    ownHead: r?.get(ownHost) ?? 0,
    serverBehind: l ? (r?.get(ownHost) ?? 0) < l.nextSeq - 1 : false,
  };
}

/** Operations for a sync: pushes first (so a pull never has to skip our own fresh batches), then pulls and fetches. */
export function planSync(diffs: readonly SessionDiff[], o: PlanOptions): SyncOp[] {
  const pushes: SyncOp[] = [];
  const pulls: SyncOp[] = [];
  for (const d of diffs) {
    const inScope = o.only === undefined ? d.local : o.only.has(d.session);
    const behind = o.headsKnown !== false && d.serverBehind;
    if (o.push && d.local && inScope && (d.unpushedBytes > 0 || d.pending || d.shrunk || behind)) {
      pushes.push({ kind: 'push', session: d.session, resumePending: d.pending && !behind, ...(behind ? { resetTo: d.ownHead + 1 } : {}) });
    }
    if (!o.pull || d.waitingBatches === 0) continue;
    if (d.local && inScope) pulls.push({ kind: 'pull', session: d.session, batches: d.waitingBatches });
    else if (!d.local && (o.fetchRemoteOnly || inScope)) pulls.push({ kind: 'fetch', session: d.session, batches: d.waitingBatches });
  }
  return [...pushes, ...pulls];
}

/** Totals for the one summary line and `status`. */
export function summarise(diffs: readonly SessionDiff[]): { sessions: number; toPush: number; unpushedBytes: number; toPull: number; waitingBatches: number; remoteOnly: number } {
  let toPush = 0, unpushedBytes = 0, toPull = 0, waitingBatches = 0, remoteOnly = 0;
  for (const d of diffs) {
    if (d.local && (d.unpushedBytes > 0 || d.pending)) toPush++;
    unpushedBytes += d.unpushedBytes;
    if (d.waitingBatches > 0) toPull++;
    waitingBatches += d.waitingBatches;
    if (!d.local) remoteOnly++;
  }
  return { sessions: diffs.length, toPush, unpushedBytes, toPull, waitingBatches, remoteOnly };
}
