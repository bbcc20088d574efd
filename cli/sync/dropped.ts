// Sessions this machine synced and then lost its file of (deleted by hand, or by an agent's own cleanup): the server
// keeps them, and a sync does not bring them back; `sessync restore` does.
import { stat } from 'node:fs/promises';
import type { Head } from '../../shared/wire.js';
import type { SessionSyncState } from './session-sync-state.js';

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

/** Sessions with sync state here (pushed or pulled at least once) whose file no longer exists, and not listed locally. */
export async function droppedSessions(states: ReadonlyMap<string, SessionSyncState>, local: ReadonlySet<string>, heads: readonly Head[], hostId: string): Promise<Map<string, DroppedSession>> {
  const out = new Map<string, DroppedSession>();
  for (const [session, st] of states) {
    if (local.has(session) || !st.path) continue;
    if (st.pushedOffset === 0 && Object.keys(st.cursor).length === 0) continue; // never synced here
    if (!(await gone(st.path))) continue;
    let newOnServer = 0;
    for (const h of heads) if (h.session === session && h.host !== hostId) newOnServer += Math.max(0, h.seq - (st.cursor[h.host] ?? 0));
    out.set(session, { session, path: st.path, newOnServer });
  }
  return out;
}
