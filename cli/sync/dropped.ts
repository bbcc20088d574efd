// Sessions this machine synced and then lost its file of (deleted by hand, or by an agent's own cleanup): the server
// keeps them, and a sync does not bring them back; `sessync restore` does.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Head } from '../../shared/wire.js';
import { withFileLock } from '../store/file-lock.js';
import type { SessionSyncState } from './session-sync-state.js';
import { SyncState } from './sync-state.js';
import { lossRefused, unpushedEntries } from './unpushed.js';

export interface DroppedSession {
  session: string;
  /** Where its file was. */
  path: string;
  /** Batches other machines pushed since this one last pulled it. */
  newOnServer: number;
}

async function gone(path: string): Promise<boolean> {
  try {
    await stat(path);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Pushed or pulled here at least once: what makes a missing file deleted here rather than never synced. */
export function syncedHere(st: SessionSyncState): boolean {
  return st.pushedOffset > 0 || Object.keys(st.cursor).length > 0;
}

/** What `sessync rm` without --remote knows of the login: the server the entries must be on. */
export interface RemoveOptions {
  /** The logged-in server's state folder (serverKey of its URL and account), null when not logged in. */
  server: string | null;
  /** Its URL, for the message. */
  url?: string;
  /** `--force`: delete the file even when entries of it are on no server. */
  force: boolean;
}

/**
 * `sessync rm <ref>` without --remote: removes the file as a deletion by hand does and keeps every server's sync
 * state of it, which is what makes sync leave it deleted and `sessync restore` bring it back (a state dropped
 * instead would make it a session only the server has, pulled back by the next sync). Under the machine's sync
 * lock, so a sync running meanwhile finishes first, and the file's lock, so no append interleaves. Returns whether
 * some server's state says it was synced here (then it is deleted here); the states are read before the file goes,
 * so a state that cannot be read fails the command with the file still there. Entries the server has not got
 * (logged out: entries no server has) would be gone for good: refused unless `force`, the file untouched; `lost`
 * says how many went.
 */
export async function removeHere(home: string, session: string, path: string, o: RemoveOptions): Promise<{ deletedHere: boolean; lost: number; deletedOnServer?: { at: string; host: string } }> {
  const servers = join(home, 'sync', 'servers');
  let deletedOnServer: { at: string; host: string } | undefined;
  const remove = (states: ReadonlyMap<string, SessionSyncState>) =>
    withFileLock(path, async () => {
      const lost = await lossOf(path, states, o.server);
      // Deleted on the server (someone's rm --remote, which sync said and named this rm for): no push can keep these
      // entries anywhere, so refusing would only point at a push that sends nothing. The output says what went.
      // Only the logged-in server's mark: logged out, entries may still be bound for another server that has them not.
      deletedOnServer = (o.server !== null ? states.get(o.server)?.deleted : undefined) ?? undefined;
      if (lost > 0 && !o.force && !deletedOnServer) throw lossRefused(session, path, lost, { ...(o.server !== null && o.url ? { url: o.url } : {}), synced: [...states.values()].some(syncedHere) });
      await rm(path, { force: true });
      return lost;
    });
  let names: string[];
  try {
    names = await readdir(servers);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // Never synced from this home (no sync folder, so no lock to take either): only the file goes.
    const lost = await remove(new Map());
    return { deletedHere: false, lost };
  }
  const probe = new SyncState(home, '-'); // only for the machine-wide lock path, which names no server
  return withFileLock(probe.lockTarget(), async () => {
    const states = new Map<string, SessionSyncState>();
    for (const name of names) {
      const state = new SyncState(home, name);
      await state.recover(); // a killed run's journal may hold the newest state of it
      const st = await state.load(session);
      if (st) states.set(name, st);
    }
    const lost = await remove(states);
    return { deletedHere: [...states.values()].some(syncedHere), lost, ...(deletedOnServer ? { deletedOnServer } : {}) };
  }, { timeoutMs: 60_000 });
}

/**
 * Entries of the file the logged-in server lacks; logged out, the fewest any server this machine synced it with
 * lacks (a login to that one can still restore them), every entry when it was never synced.
 */
async function lossOf(path: string, states: ReadonlyMap<string, SessionSyncState>, server: string | null): Promise<number> {
  if (server !== null) return unpushedEntries(path, states.get(server) ?? null);
  const synced = [...states.values()].filter(syncedHere);
  if (synced.length === 0) return unpushedEntries(path, null);
  let fewest = Infinity;
  for (const st of synced) fewest = Math.min(fewest, await unpushedEntries(path, st));
  return fewest;
}

/** Sessions with sync state here (pushed or pulled at least once) whose file no longer exists, and not listed locally. */
export async function droppedSessions(states: ReadonlyMap<string, SessionSyncState>, local: ReadonlySet<string>, heads: readonly Head[], hostId: string): Promise<Map<string, DroppedSession>> {
  const out = new Map<string, DroppedSession>();
  for (const [session, st] of states) {
    if (local.has(session) || !st.path) continue;
    if (!syncedHere(st)) continue;
    if (!(await gone(st.path))) continue;
    let newOnServer = 0;
    for (const h of heads) if (h.session === session && h.host !== hostId) newOnServer += Math.max(0, h.seq - (st.cursor[h.host] ?? 0));
    out.set(session, { session, path: st.path, newOnServer });
  }
  return out;
}
