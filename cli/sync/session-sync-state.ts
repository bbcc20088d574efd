// One session's sync state as it is stored (offsets, seqs, cursors, its pending batch) and the pure helpers on it.
import { createHash } from 'node:crypto';
import { nullRecord } from '../../shared/own-keys.js';
import type { Cursor } from '../../shared/wire.js';

/** A batch written down before it is sent: after a crash the SAME batch (seq, batchId, body) is resent. */
export interface PendingBatch {
  seq: number;
  batchId: string;
  entryCount: number;
  sha256: string;
  /** File offset the pushed offset moves to once the server acknowledges the batch. */
  endOffset: number;
  /** A small body is kept in the state itself (one durable write instead of two); a large one in pending/. */
  body?: string;
  /**
   * The body is not stored; it is the file's lines from the pushed offset to `endOffset`, read and checked again (a
   * resend after a crash checks them against `sha256`, or sealed against `plainSha256`: a file changed below there
   * builds it anew). Sealed, they are sealed again with `nonce`, which gives the same bytes (see resealBatchBytes).
   */
  fromFile?: true;
  /** Sealed and fromFile: the nonce the body was sealed with (base64, 12 bytes). */
  nonce?: string;
  /** Sealed and fromFile: the sha-256 of the plaintext that was sealed. */
  plainSha256?: string;
  /** Set when the body is sealed (an end-to-end encrypted account): resent as it is, never sealed again. */
  encoding?: 'aes-256-gcm';
  /**
   * The sealed body is raw bytes and `sha256` is of them: in pending/ as the bytes, inline as their base64 (the state
   * is JSON). Absent on a sealed batch written down by an older sessync: its body is base64 text, `sha256` of the text.
   */
  raw?: true;
}

/** The pending batch's body is in a file of its own under pending/ (not in the state, not read from the session file). */
export function bodyFileOf(p: PendingBatch | null | undefined): p is PendingBatch {
  return !!p && p.body === undefined && p.fromFile !== true;
}

export interface SessionSyncState {
  session: string;
  /** The local session file. */
  path: string;
  /** Bytes of the file already pushed: a push reads only what comes after it. */
  pushedOffset: number;
  /** Next seq this host uses for the session (seqs are per (session, host), gap-free). */
  nextSeq: number;
  /** Per other host: the last seq merged into the local file. Saved only after the entries are fsynced. */
  cursor: Cursor;
  /** Ids appended by pulls after the pushed offset: a push skips them (the server has them already). */
  skipIds: string[];
  pending: PendingBatch | null;
  /**
   * A pull of the session is under way, or was killed: written with the state the journal makes durable before each
   * pull request leaves, dropped by the state saved after the last page. Entries that request brought may be in the
   * file from byte `from` on while their ids (skipIds) were never made durable, so the next run pulls the session
   * again before it pushes it (the re-pulled ids go to skipIds, the merge appends none twice), and status counts
   * only the bytes before `from`. `creating`: the pull was creating the file, so this machine's own batches came too.
   */
  pulling?: { from: number; creating?: true };
  /** Hash of the bytes just before `offset` when that was the pushed offset: tells a rewritten file from a grown one. */
  tail?: { offset: number; hash: string };
  /** The session metadata went with an acknowledged batch. */
  metaSent: boolean;
  /**
   * Encrypted: the session's data key as its stored meta wraps it (a meta's wrapped key never changes under one
   * account key id), written down with an acknowledged batch so a later push opens it here instead of asking for
   * the meta. Under another key id (a rotation since), the server's meta is asked again.
   */
  dataKey?: { keyId: string; wrappedKey: string };
  projectKey?: string;
  /** The session was deleted on the server (its tombstone): not pushed or pulled until `push --undelete`. */
  deleted?: { at: string; host: string };
  /** Damaged stored batches (or lines) a pull passed over, newest last, at most MAX_BAD_BATCHES. */
  badBatches?: BadBatchRecord[];
}

/** A stored batch, or one line of it, that a pull could not merge. */
export interface BatchProblem {
  host: string;
  seq: number;
  /** 1-based line of the batch body; absent when the whole batch was refused. */
  line?: number;
  reason: string;
}

export interface BadBatchRecord extends BatchProblem {
  /** When the pull met it. */
  at: string;
}

const MAX_BAD_BATCHES = 100;

/**
 * The state's record of damaged batches after a pull met `found`: each is reported by the run that meets it,
 * and the cursor moves past it (so the good batches after it are merged, and it is not fetched again). The
 * record keeps what was passed over, for `sessync status` and for anyone repairing the server's copy.
 */
export function rememberBadBatches(st: SessionSyncState, found: readonly BatchProblem[]): { badBatches?: BadBatchRecord[] } {
  if (found.length === 0) return st.badBatches ? { badBatches: st.badBatches } : {};
  const at = new Date().toISOString();
  return { badBatches: [...(st.badBatches ?? []), ...found.map((p) => ({ ...p, at }))].slice(-MAX_BAD_BATCHES) };
}

export function newSessionState(session: string, path: string): SessionSyncState {
  return { session, path, pushedOffset: 0, nextSeq: 1, cursor: nullRecord(), skipIds: [], pending: null, metaSent: false };
}

/**
 * Names the server and account the per-session state belongs to: offsets, seqs and cursors mean nothing to
 * another server (or another account on the same one), so a new login starts from zero instead of believing
 * its sessions are already pushed.
 */
export function serverKey(url: string, account: string | undefined): string {
  return createHash('sha256').update(`${url}\n${account ?? ''}`, 'utf8').digest('hex').slice(0, 24);
}
