// What `sessync rm` would lose for good: the entries of a session file that no server has, by this machine's sync state.
import { open, stat } from 'node:fs/promises';
import { SessyncError } from '../../shared/errors.js';
import { readSlice, tailHash } from './read-slice.js';
import type { SessionSyncState } from './session-sync-state.js';

/**
 * Entries a push from `st` would send, counted as the push reads the file (its slices: pulled ids skipped, a file
 * changed below its pushed offset counted from its start, as the push would send it again); every entry of the file
 * when there is no state. Plus the lines no push ever sends, which rm would lose as surely: lines the server refuses
 * (over the size or depth limit, not JSON, a bad id), wherever they are in the file (a push passes over them and its
 * offset moves on), and a last line without its newline, which a push takes for one still being written.
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
  let pos = 0;
  // Before the pushed offset only the lines pushes passed over count; after it, what the next push sends too.
  for (const [end, counted] of [[from, false], [size, true]] as const) {
    while (pos < end) {
      const s = await readSlice(path, pos, end, skip);
      if (counted) n += s.count;
      n += s.skipped.filter((k) => !k.sent).length;
      if (s.end <= pos) break;
      pos = s.end;
    }
  }
  if (pos < size && (await hasText(path, pos, size))) n++; // a last line with no newline: this file is its only copy
  return n;
}

/** Whether bytes [from, size) hold more than blanks. */
async function hasText(path: string, from: number, size: number): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(size - from, 1 << 16));
    for (let at = from; at < size; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - at), at);
      if (bytesRead === 0) break;
      if (buf.toString('utf8', 0, bytesRead).trim() !== '') return true;
      at += bytesRead;
    }
    return false;
  } finally {
    await fh.close();
  }
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
    ? `session ${session} has ${entries(n)} not pushed to ${where.url}: rm would delete ${them} for good (restore brings back only what the server has). Run \`sessync push ${session}\` (or \`sessync sync\`) first, or ${force}. A line a push reports as not pushed (over a limit, not JSON) counts too: no server will take it`
    : `session ${session} has ${entries(n)} not pushed to any server (not logged in${where.synced ? '' : ', never synced from this machine'}): this file is the only copy, and rm would delete ${them} for good. Run \`sessync login <url> --token <token>\` and \`sessync push ${session}\` first, or ${force}`;
  return new SessyncError('conflict', message, { retryable: false, details: { session, path, unpushed: n } });
}

export { entries as entryCount };
