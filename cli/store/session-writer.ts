// Writes session files: create (temp + fsync + link, never over an existing file) and append (locked, one line
// per entry, a torn last line ended first, fsync before returning; nothing already written is ever rewritten).
import { constants, open, unlink } from 'node:fs/promises';
import { closeSync, fstatSync, fsync, linkSync, open as openFd, unlinkSync, write, writev } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CURRENT_VERSION } from '../../shared/entry.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { serializeLine, serializeSession } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';
import { withFileLock } from './file-lock.js';
import { appendWhole } from './append-whole.js';
import { namingPath } from '../fs-error.js';
import type { LockOptions } from './file-lock.js';
import { advanceAppended, saveTailState, stateOfEntries, stateOfWritten, tailStateOf } from './tail-state.js';
import type { TailState } from './tail-state.js';
import { PRIVATE_FILE, mkdirPrivateSync } from './private-fs.js';
import { cannotFsyncFolder, noteNamed, sessionsRootOf, unnamedUpTo } from './folder-names.js';
import { queueSummaryRow, summaryRowOf } from './summary-pending.js';
import { saveCache } from './cache-save.js';

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

/**
 * Folders whose names in their parents are being fsynced for new files (made by this process, or found and vouched
 * for): a file linked in one (or below one) is not durable until that is done, whoever made the folder. A pull's
 * files that found the folder missing together make it once; the others must not report their file durable before
 * the one that made it has its parent fsynced. Each entry goes once its fsyncs are done.
 */
const parentSyncs = new Map<string, Promise<void>>();

/**
 * `made` (mkdirPrivate's answer, deepest first): each folder's name fsynced in its parent, up to the folder that was
 * there: one fsync per new folder, not per file, started now and waited for by every file linked under them (see
 * syncParents). Called at once after the mkdir, before any file can be linked in the new folders.
 */
export function syncNewFolders(made: readonly string[]): void {
  noteNamed(made);
  syncParents(made);
}

/**
 * Each folder's parent fsynced, at once (not left to a journal: once per folder per process, so there is nothing to
 * share), and waited for by every file linked under them (newFoldersSynced). A parent this process can never fsync
 * (cannotFsyncFolder: no read permission, no folder fsync on the platform) is passed over: failing would stop every
 * new file for good and make nothing more durable, and it is above the file's own folder, whose fsync stays strict.
 */
function syncParents(dirs: readonly string[]): void {
  if (dirs.length === 0) return;
  const p = Promise.all(dirs.map((d) => fsyncDir(dirname(d)).catch(passUnsyncable))).then(noop);
  for (const d of dirs) parentSyncs.set(d, p);
  // Kept on failure: every later file under the folder fails too (its name is not known durable), and says why.
  p.then(() => {
    for (const d of dirs) if (parentSyncs.get(d) === p) parentSyncs.delete(d);
  }, noop);
}

function passUnsyncable(e: unknown): void {
  if (!cannotFsyncFolder(e)) throw e;
}

/**
 * A file just created in `dir` made durable by name: the folder fsynced (or left to `defer`, a journal that fsyncs
 * it before its next write), and every folder from `dir` up to `top()` (a sessions root, or the folder holding the
 * state that records the file) known named in its parent: the ones this process did not make or vouch for yet get
 * their parents fsynced once, and those fsyncs, or the ones already under way, are waited for.
 */
export async function syncNewName(dir: string, defer: ((dir: string) => boolean) | undefined, top: () => string): Promise<void> {
  syncParents(unnamedUpTo(dir, top));
  if (!defer?.(dir)) await fsyncDir(dir);
  await newFoldersSynced(dir);
}

/** syncNewName for the file at `path`, up to the sessions root it lives under (sessionsRootOf). */
export function syncFileName(path: string, defer: ((dir: string) => boolean) | undefined, env: NodeJS.ProcessEnv): Promise<void> {
  const dir = dirname(path);
  return syncNewName(dir, defer, () => sessionsRootOf(dir, env));
}

/** The parent fsyncs of new folders at or above `dir` still under way (none: nothing to wait for). */
async function newFoldersSynced(dir: string): Promise<void> {
  if (parentSyncs.size === 0) return;
  for (let d = dir; ; d = dirname(d)) {
    const p = parentSyncs.get(d);
    if (p) await p;
    if (dirname(d) === d) return;
  }
}

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

/** A new file, created exclusively (private), opened for writing in the thread pool. */
function openNew(path: string): Promise<number> {
  return new Promise((resolve, reject) => openFd(path, 'wx', PRIVATE_FILE, (e, fd) => (e ? reject(e) : resolve(fd))));
}

/** Removes a temp file, synchronously; one already gone (or not removable) leaves nothing to report: its data is elsewhere. */
function unlinkQuietly(tmp: string): void {
  try {
    unlinkSync(tmp);
  } catch {
    // a leftover temp file is hidden (a dot name) and holds only what the linked file holds
  }
}

function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
}

/** Runs at most `limit` of the calls it is given at once; the others wait their turn in order. */
class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.running++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the turn passes on: running stays as it is
      else this.running--;
    }
  }
}

/**
 * New session files' fsyncs in the thread pool at once: fewer than its threads (4 unless UV_THREADPOOL_SIZE says
 * otherwise). A pull writes up to 128 files at a time; were all their fsyncs queued in the pool, the journal's one
 * fsync that must precede the next pull request would wait behind all of them (the pool's queue is first come, first
 * served), and the server would idle meanwhile. One thread is left for it and the other calls.
 */
const newFileFsyncs = new Turns(Math.max(1, (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1));

/**
 * A new file's pieces written to a temp file beside `path` (one writev, no joined copy), fsynced; its folder made
 * only when the open finds it missing (a pull creating 1,000 files in one folder asks once, not 1,000 times).
 * Returns the temp path and the written file's mtime (a link to it keeps it).
 *
 * The calls that can take long go to the thread pool: the create (a millisecond and more where the file system has
 * many recently deleted inodes to pass over: ext4 looks at each), the write (memory for the page cache may have to be
 * reclaimed first) and the fsync (the disk). fstat and close are calls of microseconds, and a pull that creates 1,000
 * files would spend more on their thread-pool round trips (a wake-up of a worker and of the loop each) than on them.
 */
async function writeTempPieces(path: string, data: readonly Uint8Array[]): Promise<{ tmp: string; mtimeMs: number }> {
  const tmp = tempBeside(path);
  let fd: number;
  try {
    fd = await openNew(tmp);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // At once: the other files of the pull that found it missing too open after it. The new folders' names are
    // taken care of before this returns to the loop: no file can be linked in them before their fsyncs are known.
    syncNewFolders(mkdirPrivateSync(dirname(path)));
    fd = await openNew(tmp);
  }
  let mtimeMs: number;
  try {
    let size = 0;
    for (const d of data) size += d.byteLength;
    const written = await new Promise<number>((resolve, reject) => writev(fd, data as Uint8Array[], (e, n) => (e ? reject(e) : resolve(n))));
    // Short (the disk filled up mid-way): the rest written until a write says why it cannot (ENOSPC, EDQUOT, EFBIG).
    if (written !== size) await writeRest(fd, Buffer.concat(data as Uint8Array[]).subarray(written), tmp);
    await newFileFsyncs.run(() => new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve()))));
    mtimeMs = fstatSync(fd).mtimeMs;
  } catch (e) {
    closeSync(fd);
    await unlink(tmp).catch(() => undefined); // the temp file only: the error above is what the caller gets
    throw namingPath(e, path); // a write on the descriptor names no file: the one being created
  }
  closeSync(fd);
  return { tmp, mtimeMs };
}

/** Writes all of `rest` at the descriptor's position, in as many writes as it takes; a write that fails throws. */
async function writeRest(fd: number, rest: Uint8Array, tmp: string): Promise<void> {
  for (let at = 0; at < rest.byteLength; ) {
    const n = await new Promise<number>((resolve, reject) => write(fd, rest, at, rest.byteLength - at, null, (e, k) => (e ? reject(e) : resolve(k))));
    // A regular file's write that takes nothing has run out of room (space, a quota, a file size limit).
    if (n <= 0) throw new SessyncError('fs_full', `cannot write to ${tmp}: its disk took none of ${rest.byteLength - at} bytes (no space left, a quota or a file size limit). Free some space there, then retry`, { retryable: true, details: { path: tmp } });
    at += n;
  }
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
export async function createSessionFile(
  path: string,
  header: SessionHeader,
  entries: SessionEntry[] = [],
  texts?: ReadonlyMap<object, string>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TailState> {
  const data = Buffer.from(serializeSession(header, entries, texts), 'utf8');
  return writeNewFile(path, header, [data], stateOfEntries(entries), env);
}

/**
 * A pulled file smaller than this gets no tail-state cache of its own when nothing will be appended to it in the same
 * run: a cache file costs a create (an inode, a thread-pool round trip each for open, write, close and rename) per
 * session, about what the first append's rebuild from a file this small costs (parsing it once), and most pulled files
 * are never appended by sessync (pi appends them itself; a resume takes the state from the session's index). A
 * larger one keeps its cache: rebuilding it would read and parse every byte again.
 */
export const PULLED_TAIL_CACHE_MIN_BYTES = 1024 * 1024;

export interface PulledFileOptions {
  /** Later pages of the session will be appended in this run (their append reads the tail cache). */
  more?: boolean;
  /**
   * Takes the new file's folder to fsync later, before anything that depends on the file being found is made durable
   * (the run's state journal syncs its folders before its own fsync); false: not taken, the folder is fsynced now.
   */
  deferFolderSync?: (dir: string) => boolean;
}

/**
 * createSessionFile for pulled lines: the header, then the lines' bytes as they are. `env`: the run's (its home keeps
 * the caches). `more`: later pages of the session will be appended in this run (their append reads the tail cache).
 * What `list` shows of the file goes into its folder's list cache with the other files of the run (summary-pending).
 */
export async function createPulledFile(path: string, header: SessionHeader, page: EntryLines, env: NodeJS.ProcessEnv = process.env, o: PulledFileOptions = {}): Promise<TailState> {
  const data = [Buffer.from(serializeLine(header) + '\n', 'utf8'), ...page.lines];
  const state = await linkNewFile(path, header, data, page.state, env, o.deferFolderSync);
  // The file is durable: its cache must not fail the pull (the re-pull would find the file there).
  if (o.more || state.size >= PULLED_TAIL_CACHE_MIN_BYTES) await saveCache('append', saveTailState(state, env));
  if (!o.more) queueSummaryRow(path, summaryRowOf(path, header, state), env);
  return state;
}

async function writeNewFile(path: string, header: SessionHeader, data: readonly Uint8Array[], entries: TailState, env: NodeJS.ProcessEnv): Promise<TailState> {
  const state = await linkNewFile(path, header, data, entries, env);
  // Leaves name and message count for `list`. The file is durable: a cache that cannot be saved must not fail
  // `new`, `fork` or an import, whose retry would make the session twice.
  await saveCache('append', saveTailState(state, env));
  return state;
}

/**
 * The new file written (temp, fsync, link, folder fsync, and the fsync of each new or unvouched folder's parent up to
 * the sessions root) and its tail state, built from what was written. The file's folder's fsync is left to
 * `deferFolderSync` when it takes it.
 */
async function linkNewFile(path: string, header: SessionHeader, data: readonly Uint8Array[], entries: TailState, env: NodeJS.ProcessEnv, deferFolderSync?: (dir: string) => boolean): Promise<TailState> {
  const { tmp, mtimeMs } = await writeTempPieces(path, data);
  try {
    linkSync(tmp, path); // link, unlike rename, refuses to replace an existing file
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new SessyncError('conflict', `${path} already exists`);
    throw e;
  } finally {
    unlinkQuietly(tmp);
  }
  // Its folder's name, and each one's above it up to the sessions root (made by this file, another or found), too.
  await syncFileName(path, deferFolderSync, env);
  return stateOfWritten(path, header, entries, data, mtimeMs);
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

/** `texts`: exact lines for some entries; `env`: the run's environment, whose SESSYNC_HOME keeps the tail state. */
export type AppendOptions = LockOptions & { texts?: ReadonlyMap<object, string>; env?: NodeJS.ProcessEnv };

/**
 * Appends the entries `build` returns, computed while holding the file's lock from the file's current state
 * (so two processes defaulting to "the leaf" make a chain, not two siblings). Returns the entries written.
 */
export async function appendWith(
  path: string,
  build: (view: AppendView) => SessionEntry[],
  opts: AppendOptions = {},
): Promise<SessionEntry[]> {
  const env = opts.env ?? process.env;
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
        const state = await tailStateOf(path, fh, env);
        checkWritable(path, state);
        const entries = build({ leafId: state.leafId, lastId: state.lastId, headerId: state.headerId, tips: state.tips, entryCount: state.entryCount });
        if (entries.length === 0) {
          // Nothing to write (a leaf check that found the leaves agreeing): keep what was parsed, so the next
          // look at a file another program wrote reads only what is new.
          await saveCache('append', saveTailState(state, env));
          return entries;
        }
        let text = '';
        // A pulled line is written as the exact text it arrived as: lines travel byte-exact.
        for (const e of entries) text += (opts.texts?.get(e) ?? serializeLine(e)) + '\n';
        // A torn last line (a crash mid-write) is ended first so the new entry never gets glued onto it.
        if (state.size > 0 && !(await endsWithNewline(fh, state.size))) text = '\n' + text;
        const data = Buffer.from(text, 'utf8');
        await appendWhole(fh, path, data); // all of it, or (a full disk) the file as it was
        await advanceAppended(state, fh, entries, data); // from the entries in hand: their lines are not parsed again
        // The entries are durable: a cache that cannot be saved now (the disk full) must not fail the append, whose
        // retry would write them twice. The next reader finds the cache behind the file and parses what is new.
        await saveCache('append', saveTailState(state, env));
        return entries;
      } finally {
        await fh.close();
      }
    },
    opts,
  );
}

/** Appends complete entries (ids, parents and timestamps already set); `texts`: exact lines for some of them. */
export async function appendEntries(path: string, entries: SessionEntry[], opts: AppendOptions = {}): Promise<void> {
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

/** Whether the file of `fh` (opened for reading, `size` > 0 bytes) ends in '\n'. */
export async function endsWithNewline(fh: import('node:fs/promises').FileHandle, size: number): Promise<boolean> {
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, size - 1);
  return b[0] === 0x0a;
}
