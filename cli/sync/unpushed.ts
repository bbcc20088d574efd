// What `sessync rm` would lose for good: the entries of a session file that no server has, by this machine's sync state.
import { stat } from 'node:fs/promises';
import { SessyncError } from '../../shared/errors.js';
import { readSlice, tailHash } from './read-slice.js';
import type { SessionSyncState } from './session-sync-state.js';

/**
 * Entries a push from `st` would send, counted as the push reads the file (its slices: pulled ids skipped, lines the
 * server would refuse left out, a torn last line not yet an entry); every entry of the file when there is no state.
 * A file changed below its pushed offset is counted from its start, as the push would send it again.
 */
export async function unpushedEntries(path: string, st: SessionSyncState | null): Promise<number> {
  const size = (await stat(path)).size;
  let from = st?.pushedOffset ?? 0;
  let skip = new Set(st?.skipIds ?? []);
  if (st && from > 0) {
    const h = from <= size ? await tailHash(path, from) : null;
    if (h === null || (st.tail?.offset === from && st.tail.hash !== h)) {
      from = 0;
      skip = new Set();
    }
  }
  let n = 0;
  while (from < size) {
    const s = await readSlice(path, from, size, skip);
    n += s.count;
    if (s.end <= from) break; // only a torn last line is left
    from = s.end;
  }
  return n;
}

const entries = (n: number) => `${n} entr${n === 1 ? 'y' : 'ies'}`;

/**
 * The refusal of an rm that would lose `n` entries: what they are missing from, and the two ways on (push them, or
 * --force). Not retryable: the same command fails the same way until one of those is done.
 */
export function lossRefused(session: string, path: string, n: number, where: { url?: string; synced: boolean }): SessyncError {
  const them = n === 1 ? 'it' : 'them';
  const force = `\`sessync rm ${session} --force\` to delete ${them} anyway`;
  const message = where.url
    ? `session ${session} has ${entries(n)} not pushed to ${where.url}: rm would delete ${them} for good (restore brings back only what the server has). Run \`sessync push ${session}\` (or \`sessync sync\`) first, or ${force}`
    : `session ${session} has ${entries(n)} not pushed to any server (not logged in${where.synced ? '' : ', never synced from this machine'}): this file is the only copy, and rm would delete ${them} for good. Run \`sessync login <url> --token <token>\` and \`sessync push ${session}\` first, or ${force}`;
  return new SessyncError('conflict', message, { retryable: false, details: { session, path, unpushed: n } });
}

export { entries as entryCount };
