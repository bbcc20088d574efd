// This machine's host id, bound to its copy of the sync folder; a copied SESSYNC_HOME gets a new one and its state re-keyed.
import { randomUUID } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic-json.js';
import { withFileLock } from '../store/file-lock.js';
import { mkdirPrivate } from '../store/private-fs.js';
import { readStateJson } from './read-state-json.js';
import { bodyFileOf } from './session-sync-state.js';
// Only the type: SyncState calls this module, and passes how to open another server's state.
import type { SyncState } from './sync-state.js';

interface HostFile {
  hostId: string;
  created?: string;
  /** folderMark() of the folder this id was made in. */
  folder?: string;
  copiedFrom?: string;
}

/**
 * Random, made once per SESSYNC_HOME: names this machine's batches on the server. It is bound to
 * this copy of the folder (the sync folder's inode and creation time): a SESSYNC_HOME copied to
 * another machine would otherwise push as the same host, and each copy would skip the other's
 * batches as its own. A copy gets a new id once, and its state is carried over (see rekey).
 *
 * `state` is the machine-wide part (its `dir` and run lock); `openServer` opens the state of one server key.
 */
export async function hostId(state: SyncState, openServer: (server: string) => SyncState, note?: (text: string) => void): Promise<string> {
  const p = join(state.dir, 'host.json');
  const mark = await folderMark(state.dir);
  const have = await readStateJson<HostFile>(p);
  if (have?.hostId && have.folder === mark) return have.hostId;
  if (have?.hostId && have.folder === undefined) {
    // Written before folder marks: adopt this folder (a copy made before cannot be told apart).
    await writeFileAtomic(p, JSON.stringify({ ...have, folder: mark }) + '\n');
    return have.hostId;
  }
  return withFileLock(state.lockTarget(), async () => {
    const now = await readStateJson<HostFile>(p); // another process may have re-keyed meanwhile
    if (now?.hostId && now.folder === mark) return now.hostId;
    const hostId = randomUUID();
    if (now?.hostId) {
      const carried = await rekey(state.dir, openServer, now.hostId);
      note?.(`this SESSYNC_HOME is a copy of another machine's (host ${now.hostId}); pushing as a new host ${hostId} from now on, and pulling the other's batches (${carried} session state(s) carried over)`);
    }
    const file: HostFile = { hostId, created: new Date().toISOString(), folder: mark, ...(now?.hostId ? { copiedFrom: now.hostId } : {}) };
    await writeFileAtomic(p, JSON.stringify(file) + '\n');
    return hostId;
  }, { timeoutMs: 60_000 });
}

/** Inode and creation time of the sync folder: unchanged by renames and restarts, new in a copy. */
async function folderMark(dir: string): Promise<string> {
  await mkdirPrivate(dir);
  const st = await stat(dir, { bigint: true });
  return `${st.ino}:${st.birthtimeMs}`;
}

/**
 * After a copy, per session and server: this host's seqs start again at 1 under the new id, and the
 * old id becomes another host whose batches up to the old next seq are already in the copied file
 * (the pull then fetches only what the original machine pushed since). Offsets stay: those bytes
 * are on the server under the old id. A pending batch is dropped: its bytes follow the pushed
 * offset and go out in the next batch (a server that took it too merges by id).
 */
async function rekey(dir: string, openServer: (server: string) => SyncState, oldHost: string): Promise<number> {
  let count = 0;
  const servers = join(dir, 'servers');
  for (const server of await readdir(servers).catch(() => [] as string[])) {
    const other = openServer(server);
    await other.recover(); // a killed run's newest states first
    const states = await other.all();
    if (states.size === 0) continue;
    // Every session of the server at once: through the journal, compacted into the pack (one durable write).
    other.openJournal();
    for (const st of states.values()) {
      await other.save({ ...st, nextSeq: 1, pending: null, cursor: { ...st.cursor, [oldHost]: st.nextSeq - 1 } });
      count++;
    }
    await other.closeJournal();
    for (const st of states.values()) if (bodyFileOf(st.pending)) await other.dropPendingBody(st.session, st.pending.seq);
  }
  return count;
}
