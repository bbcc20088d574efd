// Writes session files: create (temp + fsync + link, never over an existing file) and append (locked, one line
// per entry, a torn last line ended first, fsync before returning; nothing already written is ever rewritten).
import { constants, link, open, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CURRENT_VERSION } from '../../shared/entry.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { serializeLine, serializeSession } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';
import { withFileLock } from './file-lock.js';
import type { LockOptions } from './file-lock.js';
import { advanceAppended, saveTailState, stateOfEntries, stateOfWritten, tailStateOf } from './tail-state.js';
import type { TailState } from './tail-state.js';
import { PRIVATE_FILE, mkdirPrivate } from './private-fs.js';

/** fsync a file, or a folder so a new name in it survives a crash. */
export async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A folder's fsync under way, and the one queued after it (shared by every caller that came while it ran). */
interface DirSync {
  current: Promise<void>;
  queued: Promise<void> | null;
}
const dirSyncs = new Map<string, DirSync>();

/**
 * fsync of a folder, so the names created in it before the call survive a crash. Callers at once share fsyncs: one
 * that arrives while an fsync is under way (it may have started before this caller's name was made) waits for the
 * next one, shared by all who arrive meanwhile. A pull creating 1,000 files in one project folder then costs a few
 * dozen folder fsyncs, not 1,000. A failure reaches every caller that shared it.
 */
export function fsyncDir(dir: string): Promise<void> {
  const s = dirSyncs.get(dir);
  if (!s) {
    const st: DirSync = { current: fsyncPath(dir), queued: null };
    dirSyncs.set(dir, st);
    settleAfter(dir, st);
    return st.current;
  }
  s.queued ??= s.current.then(noop, noop).then(() => {
    s.current = fsyncPath(dir);
    s.queued = null;
    settleAfter(dir, s);
    return s.current;
  });
  return s.queued;
}

function settleAfter(dir: string, st: DirSync): void {
  const mine = st.current;
  const done = () => {
    // Forgotten once nothing is queued behind it: the next caller starts a fresh fsync.
    if (dirSyncs.get(dir) === st && st.current === mine && st.queued === null) dirSyncs.delete(dir);
  };
  mine.then(done, done);
}

function noop(): void {}

/** Writes `data` to a temp file beside `path` and fsyncs it; returns the temp path. */
export async function writeTemp(path: string, data: string | Uint8Array): Promise<string> {
  const tmp = tempBeside(path);
  const fh = await open(tmp, 'wx', PRIVATE_FILE); // a session holds the user's prompts, code and output: theirs alone
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  return tmp;
}

function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
}

/**
 * A new file's pieces written to a temp file beside `path` (one writev, no joined copy), fsynced; its folder made
 * only when the open finds it missing (a pull creating 1,000 files in one folder asks once, not 1,000 times).
 * Returns the temp path and the written file's mtime (a link to it keeps it).
 */
async function writeTempPieces(path: string, data: readonly Uint8Array[]): Promise<{ tmp: string; mtimeMs: number }> {
  const tmp = tempBeside(path);
  let fh;
  try {
    fh = await open(tmp, 'wx', PRIVATE_FILE);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await mkdirPrivate(dirname(path));
    fh = await open(tmp, 'wx', PRIVATE_FILE);
  }
  let mtimeMs: number;
  try {
    let size = 0;
    for (const d of data) size += d.byteLength;
    const { bytesWritten } = await fh.writev(data as Uint8Array[]);
    if (bytesWritten !== size) throw new SessyncError('internal', `${tmp}: wrote ${bytesWritten} of ${size} bytes`);
    await fh.sync();
    mtimeMs = (await fh.stat()).mtimeMs;
  } catch (e) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  return { tmp, mtimeMs };
}

/**
 * A pulled new file's entry lines as bytes, in file order, each ended by its newline (the batches' bodies as they
 * came, or their lines), and the tail state of the entries they hold (stateOfEntries): the caller vouches that the
 * lines are exactly those entries, so nothing is serialised or parsed again.
 */
export interface EntryLines {
  lines: readonly Uint8Array[];
  state: TailState;
}

/**
 * Creates a new session file atomically; fails with 'conflict' when the file already exists. Returns the file's tail
 * state (also saved for `list` and the next append), built from the entries written rather than read back.
 * `texts`: the exact line of some entries (the rest serialised).
 */
export async function createSessionFile(path: string, header: SessionHeader, entries: SessionEntry[] = [], texts?: ReadonlyMap<object, string>): Promise<TailState> {
  const data = Buffer.from(serializeSession(header, entries, texts), 'utf8');
  return writeNewFile(path, header, [data], stateOfEntries(entries));
}

/** createSessionFile for pulled lines: the header, then the lines' bytes as they are. */
export function createPulledFile(path: string, header: SessionHeader, page: EntryLines): Promise<TailState> {
  return writeNewFile(path, header, [Buffer.from(serializeLine(header) + '\n', 'utf8'), ...page.lines], page.state);
}

async function writeNewFile(path: string, header: SessionHeader, data: readonly Uint8Array[], entries: TailState): Promise<TailState> {
  const { tmp, mtimeMs } = await writeTempPieces(path, data);
  try {
    await link(tmp, path); // link, unlike rename, refuses to replace an existing file
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new SessyncError('conflict', `${path} already exists`);
    throw e;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  await fsyncDir(dirname(path));
  const state = stateOfWritten(path, header, entries, data, mtimeMs);
  await saveTailState(state); // leaves name and message count for `list`
  return state;
}

/** What a builder sees under the lock: the current leaf and tips, so defaults are chosen without a race. */
export interface AppendView {
  leafId: string | null;
  /** The file's last entry (pi's leaf). */
  lastId: string | null;
  headerId: string | null;
  tips: Readonly<Record<string, string>>;
  entryCount: number;
}

/**
 * Appends the entries `build` returns, computed while holding the file's lock from the file's current state
 * (so two processes defaulting to "the leaf" make a chain, not two siblings). Returns the entries written.
 */
export async function appendWith(
  path: string,
  build: (view: AppendView) => SessionEntry[],
  opts: LockOptions & { texts?: ReadonlyMap<object, string> } = {},
): Promise<SessionEntry[]> {
  return withFileLock(
    path,
    async () => {
      let fh;
      try {
        // Read-write, appending, and without O_CREAT: a missing session is an error, never a new empty file.
        fh = await open(path, constants.O_RDWR | constants.O_APPEND);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SessyncError('not_found', `session file ${path} does not exist`);
        throw e;
      }
      try {
        const state = await tailStateOf(path, fh);
        checkWritable(path, state);
        const entries = build({ leafId: state.leafId, lastId: state.lastId, headerId: state.headerId, tips: state.tips, entryCount: state.entryCount });
        if (entries.length === 0) {
          // Nothing to write (a leaf check that found the leaves agreeing): keep what was parsed, so the next
          // look at a file another program wrote reads only what is new.
          await saveTailState(state);
          return entries;
        }
        let text = '';
        // A pulled line is written as the exact text it arrived as: lines travel byte-exact.
        for (const e of entries) text += (opts.texts?.get(e) ?? serializeLine(e)) + '\n';
        // A torn last line (a crash mid-write) is ended first so the new entry never gets glued onto it.
        if (state.size > 0 && !(await endsWithNewline(fh, state.size))) text = '\n' + text;
        const data = Buffer.from(text, 'utf8');
        await fh.write(data);
        await fh.sync();
        await advanceAppended(state, fh, entries, data); // from the entries in hand: their lines are not parsed again
        await saveTailState(state);
        return entries;
      } finally {
        await fh.close();
      }
    },
    opts,
  );
}

/** Appends complete entries (ids, parents and timestamps already set); `texts`: exact lines for some of them. */
export async function appendEntries(path: string, entries: SessionEntry[], opts: LockOptions & { texts?: ReadonlyMap<object, string> } = {}): Promise<void> {
  await appendWith(path, () => entries, opts);
}

function checkWritable(path: string, state: TailState): void {
  if (state.headerId === null) throw new SessyncError('corrupt', `${path} has no session header; not appending to it`);
  if (state.version < CURRENT_VERSION) {
    throw new SessyncError('unsupported_version', `${path} is format version ${state.version}; run \`sessync migrate ${path}\` before appending`);
  }
  if (state.version > CURRENT_VERSION) {
    throw new SessyncError('unsupported_version', `${path} is format version ${state.version}, newer than this sessync (${CURRENT_VERSION}); upgrade sessync`);
  }
}

async function endsWithNewline(fh: import('node:fs/promises').FileHandle, size: number): Promise<boolean> {
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, size - 1);
  return b[0] === 0x0a;
}
