// Sessions deleted on the server: stop pushing them, keep (or with --apply-deletes remove pi's) local file, and undelete on request.
import { rm } from 'node:fs/promises';
import { isSessyncError } from '../../shared/errors.js';
import type { Head, Tombstone } from '../../shared/wire.js';
import { withFileLock } from '../store/file-lock.js';
import type { SessionSummary } from '../store/session-index.js';
import { newSessionState, type SessionSyncState } from './session-sync-state.js';
import type { SyncContext } from './sync-context.js';

/** What happened here to a session deleted on the server, for the run summary. */
export interface DeletedNote {
  session: string;
  deletedAt: string;
  host: string;
  /** kept: the local file stays, unpushed; removed: --apply-deletes removed it; restored: undeleted on the server, syncing again. */
  action: 'kept' | 'removed' | 'restored';
  path?: string;
}

/**
 * Forgets what the state says the server holds (the server's copy is gone) and records the tombstone; the file's
 * bytes all count as unpushed again, so a deliberate `push --undelete` sends everything.
 */
export async function markDeleted(ctx: SyncContext, session: string, path: string, t: { at: string; host: string } | null): Promise<SessionSyncState> {
  const old = await ctx.state.load(session);
  // A killed pull's note goes too: nothing the server held is left to pull again, and the whole file is unpushed.
  const { tail: _tail, deleted: _deleted, pulling: _pulling, ...rest } = old ?? newSessionState(session, path);
  const st: SessionSyncState = { ...rest, path, pushedOffset: 0, nextSeq: 1, cursor: {}, skipIds: [], pending: null, metaSent: false, ...(t ? { deleted: t } : {}) };
  await ctx.state.save(st); // the state first: a crash before the body is gone leaves an orphan body, not a pending without one
  if (old?.pending && old.pending.body === undefined) await ctx.state.dropPendingBody(session, old.pending.seq);
  return st;
}

/** Removes a local session file under its lock (no append can interleave) and its sync state on this server. */
export async function removeLocal(ctx: SyncContext, session: string, path: string): Promise<void> {
  await withFileLock(path, async () => {
    await rm(path, { force: true });
  });
  await ctx.state.forget(session);
}

/** The file that keeps a session here, as the user knows it: the agent's own for a mirrored session, else `path`. */
function keptFile(ctx: SyncContext, session: string, path: string): { file: string; what: string } {
  const m = ctx.mirrors;
  return m ? { file: m.fileOf(session, path), what: `${m.agent}'s own file` } : { file: path, what: 'the local file' };
}

function keptMessage(ctx: SyncContext, t: Tombstone, path: string, applyDeletes: boolean): string {
  const { file, what } = keptFile(ctx, t.session, path);
  const back = `\`sessync push ${t.session} --undelete\` puts it back on the server`;
  const head = `session ${t.session} was deleted on the server at ${t.deletedAt} (asked by host ${t.host}): it is not pushed from here any more`;
  // An agent's file is the agent's: sessync never removes it, so neither `rm` (which refuses it) nor --apply-deletes is the way.
  if (ctx.mirrors) return `${head}; ${what} ${file} is kept${applyDeletes ? ' (--apply-deletes leaves it)' : ''}: sessync never removes an agent's files, delete it yourself to remove the session here (${back})`;
  return `${head}; ${what} ${file} is kept (\`sessync rm ${t.session}\` removes it, \`sessync sync --apply-deletes\` removes every such file, ${back})`;
}

/**
 * Applies the feed's tombstones to this machine. Returns the sessions the run must leave alone (neither pushed
 * nor pulled). A session whose state carries a tombstone the feed no longer lists, while the server has heads for
 * it again, was undeleted elsewhere: its state starts over (seqs from 1) and it syncs like any other.
 */
export async function applyTombstones(
  ctx: SyncContext,
  o: {
    deleted: readonly Tombstone[] | null;
    heads: readonly Head[];
    locals: readonly SessionSummary[];
    /** The run's states, already read: a push of many sessions reads no file more for this. */
    states: ReadonlyMap<string, SessionSyncState>;
    applyDeletes: boolean;
  },
): Promise<{ skip: Set<string>; notes: DeletedNote[] }> {
  const skip = new Set<string>();
  const notes: DeletedNote[] = [];
  const byId = new Map(o.locals.map((l) => [l.id, l]));
  const tombs = new Map((o.deleted ?? []).map((t) => [t.session, t]));
  for (const t of tombs.values()) {
    skip.add(t.session);
    const local = byId.get(t.session);
    if (!local) continue;
    const st = o.states.get(t.session);
    const fresh = st?.deleted?.at !== t.deletedAt;
    if (fresh) await markDeleted(ctx, t.session, local.path, { at: t.deletedAt, host: t.host });
    // Not another agent's session: removing its mirror would leave the agent's file, mirrored again by the next sync
    // with no record here that the server deleted it. Kept and marked, it stays known as deleted (never pushed).
    if (o.applyDeletes && !ctx.mirrors) {
      await removeLocal(ctx, t.session, local.path);
      ctx.note?.(`session ${t.session} was deleted on the server at ${t.deletedAt} (asked by host ${t.host}): removed ${local.path} (--apply-deletes)`);
      notes.push({ session: t.session, deletedAt: t.deletedAt, host: t.host, action: 'removed', path: local.path });
      continue;
    }
    // Said again when --apply-deletes asked to remove it: why it did not is news to whoever asked.
    if (fresh || o.applyDeletes) ctx.note?.(keptMessage(ctx, t, local.path, o.applyDeletes));
    notes.push({ session: t.session, deletedAt: t.deletedAt, host: t.host, action: 'kept', path: keptFile(ctx, t.session, local.path).file });
  }
  // Without the feed (push alone asks for no heads), the tombstones recorded earlier still hold.
  const live = new Set(o.heads.map((h) => h.session));
  for (const l of o.locals) {
    if (tombs.has(l.id)) continue;
    const st = o.states.get(l.id);
    if (!st?.deleted) continue;
    if (o.deleted !== null && live.has(l.id)) {
      await markDeleted(ctx, l.id, l.path, null);
      ctx.note?.(`session ${l.id} was put back on the server (undeleted); syncing it again`);
      notes.push({ session: l.id, deletedAt: st.deleted.at, host: st.deleted.host, action: 'restored', path: keptFile(ctx, l.id, l.path).file });
      continue;
    }
    skip.add(l.id);
  }
  return { skip, notes };
}

/** A push refused with 410: the session was deleted on the server meanwhile. Recorded, so the next runs do not ask again. */
export async function onPushGone(ctx: SyncContext, session: string, path: string, e: unknown): Promise<boolean> {
  if (!isSessyncError(e, 'gone')) return false;
  // The time and host come with the next feed; until then the marker says only that it is deleted.
  await markDeleted(ctx, session, path, { at: '', host: '' });
  const { file, what } = keptFile(ctx, session, path);
  ctx.note?.(`session ${session}: ${e.message}; ${what} ${file} is kept`);
  return true;
}

/**
 * A session pulled again for a killed pull's note answered not_found: deleted on the server since? `push` reads no
 * feed, so the tombstone may be news here; the session's meta answers 410 with it. Then it is recorded and the file
 * kept, as a sync that reads the tombstone in the feed does (applyTombstones), and the session is left alone. Null
 * when the server says nothing of a deletion: the not_found is the session's error.
 */
export async function onPullGone(ctx: SyncContext, session: string, path: string, e: unknown): Promise<DeletedNote | null> {
  if (!isSessyncError(e, 'not_found')) return null;
  let t: Tombstone | undefined;
  try {
    await ctx.api.sessionMeta(session);
    return null;
  } catch (m) {
    // Any other answer (unreachable, no meta either): the pull's not_found is what is reported for the session.
    if (!isSessyncError(m, 'gone')) return null;
    t = (m.details as { tombstone?: Tombstone } | undefined)?.tombstone;
  }
  const at = t?.deletedAt ?? '';
  const host = t?.host ?? '';
  await markDeleted(ctx, session, path, { at, host });
  ctx.note?.(keptMessage(ctx, { session, deletedAt: at, host }, path, false));
  return { session, deletedAt: at, host, action: 'kept', path: keptFile(ctx, session, path).file };
}

/**
 * `push <ref> --undelete`: lifts the server's tombstone (finishing a deletion that was interrupted first), and
 * starts the session's state over so the whole local file is pushed again.
 */
export async function undelete(ctx: SyncContext, session: string, path: string): Promise<boolean> {
  let r: { undeleted: boolean };
  try {
    r = await ctx.api.undeleteSession(session);
  } catch (e) {
    if (!isSessyncError(e, 'conflict')) throw e;
    await ctx.api.deleteSession(session, ctx.hostId);
    r = await ctx.api.undeleteSession(session);
  }
  const st = await ctx.state.load(session);
  if (r.undeleted || st?.deleted) await markDeleted(ctx, session, path, null);
  return r.undeleted;
}
