// File-system BlobStore: one file per key under a root directory, atomic put-if-absent across processes.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { closeAfter, fsyncFd, readFd, writeAllFd } from './fd-io.js';
import { dirname, join } from 'node:path';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import type { BlobBody, BlobObject, BlobStore, BlobWrite, ListOptions, ListPage } from './blob-store.js';
import { errno, unavailable } from './fs-errors.js';
import { FLAT, LAYOUT_MARKER, NESTED, holdsObjects, markerText, placeKey, readLayoutMarker, type FsLayout } from './fs-layout.js';
import { listKeys } from './fs-list.js';
import { validateKey } from './fs-names.js';
import { isStaleTemp, tempOwner } from './stale-temps.js';

export { decodeEntryName, encodeSegment, validateKey } from './fs-names.js';

const MAX_PAGE = 1000;
/** Temp files live inside the root (same file system, so link/rename stay atomic) under a name keys never map to. */
const TMP_DIR = '.tmp';
/**
 * On open, temp files of dead writers are removed at once; those of a live pid only past this age
 * (the pid may be reused). Readers never see temp files: list skips dot names and keys never map to one.
 */
const STALE_TMP_MS = 60 * 60 * 1000;
/** Folders and files only their owner can read: the store holds every account's sessions. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** A writer whose parent directory vanished (pruned by a concurrent delete) recreates it this many times. */
const MAX_DIR_RACES = 8;
/** Files one group commit holds open at once (writeMany takes longer groups in slices of this many). */
const GROUP_OPEN_FILES = 128;
/** An object no larger than this is read synchronously (one bounded read); larger ones on the thread pool. */
const SMALL_READ_BYTES = 16 * 1024;
/** Folders a process remembers as there (made or found by it); past this many it forgets them all and finds them again. */
const MAX_KNOWN_DIRS = 100_000;
const utf8 = new TextEncoder();
/**
 * Temp files made by this module so far, in every store it opened, and a tag of this copy of the module (should it
 * be loaded twice in one process): with the owner tag, each temp's name.
 */
let tempCount = 0;
const TEMP_TAG = randomBytes(4).toString('hex');

/** A put-if-absent of no bytes: made at its own name (createEmpty), not through a temp file. */
function isEmptyCreate(w: BlobWrite): boolean {
  if (w.replace) return false;
  return Array.isArray(w.body) ? w.body.every((p: Uint8Array) => p.byteLength === 0) : (w.body as Uint8Array).byteLength === 0;
}

/** chmod 0700, or a warning when the folder is someone else's (the operator chose that; the store still works). */
export async function narrowToOwner(dir: string): Promise<void> {
  try {
    await fs.chmod(dir, DIR_MODE);
  } catch (e) {
    if (errno(e) !== 'EPERM') throw e;
    console.warn(`sessync file store: cannot make ${dir} private to its owner (${(e as Error).message}); check its permissions`);
  }
}

function etagOf(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 32);
}

/**
 * A read object whose etag is hashed from its bytes on first use only: no route reads an etag, and hashing every
 * batch a pull reads cost about 0.6 ms per MB. The tag is the same one an eager hash gave (same bytes, same tag).
 */
function storedObject(key: string, body: Uint8Array): BlobObject {
  let etag: string | undefined;
  return {
    key,
    body,
    get etag() {
      return (etag ??= etagOf(body));
    },
  };
}

/**
 * The file's bytes: its size from a (synchronous, fd-only) fstat, then one read into a buffer of exactly that size,
 * not zero-filled first since the read fills it. One thread-pool round trip per object, where a guessed first read
 * and a read of the rest made two for every batch (the bulk of a pull). A short read is the end of the file: a
 * stored object's file never changes once named (put renames a new file over it), so the open handle sees one fixed
 * content; the result is then the bytes read.
 */
async function readWhole(fd: number): Promise<Uint8Array> {
  const size = fstatSync(fd).size;
  // allocUnsafeSlow: never a slice of Node's shared pool, so the object owns its whole ArrayBuffer.
  const buf = Buffer.allocUnsafeSlow(size);
  const out = new Uint8Array(buf.buffer, buf.byteOffset, size);
  // A small object (a meta, a head, a token: a page or so) in one bounded synchronous read, as open and stat are.
  const read = size <= SMALL_READ_BYTES ? (at: number) => readSync(fd, out, at, size - at, at) : (at: number) => readFd(fd, out, at, size - at, at);
  let total = 0;
  while (total < size) {
    const n = await read(total);
    if (n === 0) break;
    total += n;
  }
  return total === size ? out : out.subarray(0, total);
}

/**
 * Keys map to files under `root` (see encodeSegment: safe on case-insensitive and normalising file systems, never
 * `.`/`..`; and fs-layout.ts: which segments are folders). Writes go to a temp file that is fsynced and then linked
 * (put-if-absent: link fails with EEXIST when the key exists, atomically, whatever process raced it) or renamed (put:
 * atomic replace) into place. Readers never see a partial file. No cheaper create is as safe: a file created at its
 * own name (O_EXCL) is visible while it is written and, after a crash, half there for good; a no-replace rename
 * (renameat2) is Linux-only and not in Node. The one exception is an empty body (a head), which has nothing to be
 * half of: it is created at its own name (createEmpty).
 *
 * Calls that only touch directory entries and open files (open, close, link, rename, unlink, mkdir, rmdir,
 * stat) are made synchronously: they take microseconds, less than the CPU a thread-pool round trip costs (a push
 * made about twenty of them). The calls that wait for the disk (fsync, a file's data read or written, and
 * listings of directories larger than one block, which can be long) go to the thread pool and never block the event loop.
 * Creates (open O_EXCL, mkdir) stay synchronous although each allocates an inode, which ext4 without a journal made
 * cost 0.3-1.5 ms after a large delete: moved to the thread pool they cost the server more CPU (contending
 * allocations) and saved no wall time on two cores (measured: see the commit that took them out).
 */
export class FsStore implements BlobStore {
  private ready: Promise<void> | undefined;
  /** The layout, once the marker (or an older version's objects) told it; unset while the store is empty and unopened. */
  private settled: FsLayout | undefined;
  /**
   * Folders this process made or found there, and whose own entry it made durable, so a write into one neither tries
   * mkdir (EEXIST) nor fails a link (ENOENT) first. A folder pruned behind its back (a delete in another process)
   * costs one failed link, then it is made again.
   */
  private readonly known = new Set<string>();

  constructor(readonly root: string) {}

  /**
   * Creates the root (0700) or narrows an existing one, removes the temp files of writers that died (kill -9, power
   * loss), and settles the layout (a fresh store gets the marker of the current one). Servers call it on start;
   * writes call it on first use anyway.
   */
  open(): Promise<void> {
    return this.init();
  }

  get(key: string): Promise<BlobObject | null> {
    return this.read(key);
  }

  async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    validateKey(key);
    if (isEmptyCreate({ key, body })) return (await this.writeGroup([{ key, body }]))[0]!;
    const tmp = await this.writeTemp(key, body);
    try {
      return await this.placeOne({ key, body }, tmp);
    } finally {
      await this.removeTemp(tmp);
    }
  }

  async put(key: string, body: BlobBody): Promise<void> {
    validateKey(key);
    const tmp = await this.writeTemp(key, body);
    try {
      await this.placeOne({ key, body, replace: true }, tmp);
    } catch (e) {
      await this.removeTemp(tmp); // renamed into place, the temp name is gone already: only a failure leaves it
      throw e;
    }
  }

  /**
   * Group commit: every temp file is written, then all are fsynced in one round, then linked or renamed into
   * place, then each directory holding one of their names is fsynced once. The guarantees per write are those of
   * putIfAbsent and put (nothing is named before its data is on disk, nothing is reported before its name is),
   * at one round of fsyncs for the group instead of two fsyncs per write one after the other.
   */
  async writeMany(writes: readonly BlobWrite[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < writes.length; i += GROUP_OPEN_FILES) out.push(...(await this.writeGroup(writes.slice(i, i + GROUP_OPEN_FILES))));
    return out;
  }

  private async writeGroup(writes: readonly BlobWrite[]): Promise<boolean[]> {
    for (const w of writes) validateKey(w.key); // bad keys refuse the group before anything is written
    await this.init();
    const paths = writes.map((w) => this.pathOf(w.key));
    const temps: string[] = [];
    /** Temps renamed into place (put): their name is gone, nothing to remove. */
    const renamed = new Set<string>();
    try {
      const handles = await Promise.allSettled(writes.map(async (w) => {
        if (isEmptyCreate(w)) return { tmp: '', fh: -1 }; // created at its own name below: no temp
        const tmp = this.tempName();
        temps.push(tmp);
        return { tmp, fh: await this.openTemp(tmp, w.key, w.body) };
      }));
      const opened = handles.flatMap((h) => (h.status === 'fulfilled' ? [h.value] : []));
      const failed = handles.find((h) => h.status === 'rejected');
      if (failed) {
        // Every open and write has settled (allSettled): nothing is in flight on these fds.
        for (const { fh } of opened) if (fh >= 0) closeAfter(fh);
        throw failed.reason;
      }
      // The one fsync round: the data of every write on disk before any name points at it. Each fd is closed once its
      // own fsync has settled, never while it is in flight (a closed fd number can be reused by another open at once);
      // after a successful sync a close changes nothing stored.
      const synced = await Promise.allSettled(opened.map(({ fh }, i) => (fh < 0 ? Promise.resolve() : this.syncAndClose(fh, writes[i]!.key))));
      const unsynced = synced.find((r) => r.status === 'rejected');
      if (unsynced) throw unsynced.reason;
      const ensured = new Set<string>();
      /** Empty files created at their own names, still open: each fsynced in the names round, before any is reported. */
      const made: { fh: number; key: string }[] = [];
      const created = writes.map((w, i) => this.placed(() => (isEmptyCreate(w) ? this.createEmpty(w.key, paths[i]!, ensured, made) : this.place(w, paths[i]!, opened[i]!.tmp, ensured))));
      const refused = created.find((c) => c instanceof Error);
      for (const [i, w] of writes.entries()) if (w.replace && created[i] === true) renamed.add(opened[i]!.tmp);
      // Names made durable once per directory, before any write of the group is reported stored. A name found there
      // ("exists") too: it may be one this process placed in a group whose names round failed, or another writer's
      // not yet fsynced, and the caller takes "exists" as stored.
      const placed = paths.filter((_, i) => !(created[i] instanceof Error));
      if (refused) {
        // The others are in place, each whole, and a retry finds them: made durable before the failure is reported,
        // since a retry answered "exists" is stored for good. The refusal is the error to report; this one is logged.
        await this.syncPlaced(placed, ensured, made).catch((e: unknown) => console.warn(`sessync file store: after a refused write, ${(e as Error).message}`));
        throw refused;
      }
      await this.syncPlaced(placed, ensured, made);
      return created as boolean[];
    } finally {
      await Promise.all(temps.filter((t) => !renamed.has(t)).map((t) => this.removeTemp(t)));
    }
  }

  /** fsync of a written temp file, then its close (never while the fsync is in flight: the fd number could be reused). */
  private syncAndClose(fh: number, key: string): Promise<void> {
    return fsyncFd(fh)
      .finally(() => closeAfter(fh))
      .catch((e) => Promise.reject(unavailable('write', key, e)));
  }

  /**
   * The names round of a group: the folders (syncNames) and the empty files it created at their own names (each one's
   * inode), all settled before it resolves or throws, so no fd of the group is still open when it is reported.
   */
  private async syncPlaced(paths: readonly string[], ensured: ReadonlySet<string>, made: readonly { fh: number; key: string }[]): Promise<void> {
    const synced = await Promise.allSettled([this.syncNames(paths, ensured), ...made.map(({ fh, key }) => this.syncAndClose(fh, key))]);
    const unsynced = synced.find((r) => r.status === 'rejected');
    if (unsynced) throw unsynced.reason;
  }

  /**
   * putIfAbsent of an empty body (a head): the file is created at its own name (O_EXCL), with no temp file, write, link
   * or unlink. What makes a temp file necessary for other bodies is a name visible before its bytes are all there; an
   * empty file is whole the moment it exists, and exists only once this write was due (after what it stands for is
   * durable), so a reader or a crash can only see it absent or whole. O_EXCL is atomic across processes, as link is.
   */
  private createEmpty(key: string, path: string, ensured: Set<string>, made: { fh: number; key: string }[]): boolean {
    try {
      this.intoPlace(key, path, () => void made.push({ fh: openSync(path, 'wx', FILE_MODE), key }), ensured);
      return true;
    } catch (e) {
      if (isSessyncError(e)) throw e; // its folder could not be made (intoPlace names the key)
      if (errno(e) !== 'EEXIST') throw unavailable('put-if-absent', key, e);
    }
    // Found there: it may be one whose own fsync failed or has not run yet (a failed group, another writer still in its
    // names round), and the caller takes "exists" as stored, so its inode is made durable too before that is said.
    // Opened for writing (nothing is written): Windows flushes only a handle that may write.
    try {
      made.push({ fh: openSync(path, 'r+'), key });
    } catch (e) {
      if (errno(e) !== 'ENOENT') throw unavailable('put-if-absent', key, e); // ENOENT: deleted since (an older head)
    }
    return false;
  }

  /** One write's outcome, its error as a value: each of a group is placed whatever the others do. */
  private placed(place: () => boolean): boolean | Error {
    try {
      return place();
    } catch (e) {
      return e as Error;
    }
  }

  /** A synced temp file into place and its name made durable: a single put or putIfAbsent. */
  private async placeOne(w: BlobWrite, tmp: string): Promise<boolean> {
    const path = this.pathOf(w.key);
    const ensured = new Set<string>();
    const created = this.place(w, path, tmp, ensured);
    await this.syncNames([path], ensured); // "exists" too: that name may not be durable yet (see writeGroup)
    return created;
  }

  /** Links (put-if-absent) or renames (put) a synced temp file into place; the caller makes the name durable. */
  private place(w: BlobWrite, path: string, tmp: string, ensured: Set<string>): boolean {
    try {
      this.intoPlace(w.key, path, () => (w.replace ? renameSync(tmp, path) : linkSync(tmp, path)), ensured);
      return true;
    } catch (e) {
      if (isSessyncError(e)) throw e; // its folder could not be made (intoPlace names the key)
      if (w.replace) throw unavailable('put', w.key, e);
      if (errno(e) === 'EEXIST') return false;
      throw this.linkFailed(w.key, e);
    }
  }

  private linkFailed(key: string, e: unknown): SessyncError {
    if (errno(e) === 'EPERM' || errno(e) === 'ENOTSUP' || errno(e) === 'EOPNOTSUPP') {
      return new SessyncError('unavailable', `file store: ${this.root} is on a file system without hard links, which atomic put-if-absent needs; use a local disk (ext4, xfs, apfs, ntfs)`, { retryable: false, cause: e });
    }
    return unavailable('put-if-absent', key, e);
  }

  /**
   * fsyncs, once each, the directories holding the names at `paths` (placed or found there), and the parents of the
   * folders `ensured` (made, or first found, by these writes): a new folder's own entry is a name in its parent.
   */
  private async syncNames(paths: readonly string[], ensured: ReadonlySet<string>): Promise<void> {
    const dirs = new Set(paths.map((p) => dirname(p)));
    for (const d of ensured) if (d !== this.root) dirs.add(dirname(d));
    await Promise.all([...dirs].map((d) => this.syncDir(d).catch((e) => Promise.reject(unavailable('write', d, e)))));
    // Only now are they known: a folder whose entry a failed sync may have left undurable is made (found) again.
    if (this.known.size + ensured.size > MAX_KNOWN_DIRS) {
      this.known.clear();
      this.known.add(this.root); // the walk up in ensureDir stops at a known folder: never past the store's root
    }
    for (const d of ensured) this.known.add(d);
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? MAX_PAGE), 1), MAX_PAGE);
    // The cursor is the last key of the previous page; it supersedes startAfter.
    const found = await listKeys(this.root, this.layout(), opts.prefix ?? '', opts.cursor ?? opts.startAfter ?? '', limit + 1);
    return found.length > limit ? { keys: found.slice(0, limit), cursor: found[limit - 1]! } : { keys: found };
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      unlinkSync(path);
    } catch (e) {
      if (errno(e) === 'ENOENT') return;
      throw unavailable('delete', key, e);
    }
    this.pruneEmptyDirs(dirname(path));
  }

  /** Absolute file path of a key; throws bad_input for keys that could not be stored safely. */
  pathOf(key: string): string {
    validateKey(key);
    const { dirs, name } = placeKey(this.layout(), key.split('/'));
    return join(this.root, ...dirs, name);
  }

  /**
   * The store's layout: the marker's, known after the first call. A store with objects and no marker was written by a
   * version before the marker, in the nested layout, and is read so. An empty store without one holds nothing to
   * find in any layout; it is asked again until a write settles it (init).
   */
  private layout(): FsLayout {
    if (this.settled) return this.settled;
    // Objects first, the marker after: this version makes the marker durable before its first object, so a store seen
    // with objects and then no marker was filled by an older version. The other order could see no marker, then the
    // marker and first object of a process opening the store meanwhile, and settle on nested for good.
    const objects = holdsObjects(this.root);
    const marked = readLayoutMarker(this.root);
    if (marked) return (this.settled = marked);
    if (objects) return (this.settled = NESTED);
    return FLAT;
  }

  private async read(key: string): Promise<BlobObject | null> {
    const path = this.pathOf(key);
    let fh: number;
    try {
      fh = openSync(path, 'r');
    } catch (e) {
      // ENOTDIR cannot happen with this layout unless someone put files in the tree by hand: still not-found.
      if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return null;
      throw unavailable('get', key, e);
    }
    try {
      return storedObject(key, await readWhole(fh));
    } catch (e) {
      throw unavailable('get', key, e);
    } finally {
      closeAfter(fh); // read-only: closing changes nothing stored
    }
  }

  private init(): Promise<void> {
    this.ready ??= (async () => {
      this.layout(); // a marker this version cannot read refuses the store before anything is made in it
      await fs.mkdir(join(this.root, TMP_DIR), { recursive: true, mode: DIR_MODE });
      // An existing root (made by hand, or by an older version) is narrowed: that closes everything below it.
      await narrowToOwner(this.root);
      await this.sweepStaleTemps();
      await this.settleLayout();
      this.known.add(this.root);
    })().catch((e) => {
      this.ready = undefined;
      throw isSessyncError(e) ? e : unavailable('open', this.root, e);
    });
    return this.ready;
  }

  /**
   * Writes the marker of the layout the store is in, once: the current one for a store without objects, nested for
   * one an older version filled. Linked like any put-if-absent, so of processes opening one fresh store at once the
   * first decides and the others read its choice; it is durable before any object is written.
   */
  private async settleLayout(): Promise<void> {
    const marked = readLayoutMarker(this.root);
    if (marked) {
      this.settled = marked;
      return;
    }
    const layout = holdsObjects(this.root) ? NESTED : FLAT;
    const tmp = await this.writeTempFile(LAYOUT_MARKER, utf8.encode(markerText(layout)));
    try {
      linkSync(tmp, join(this.root, LAYOUT_MARKER));
      await this.syncDir(this.root);
      this.settled = layout;
    } catch (e) {
      if (errno(e) !== 'EEXIST') throw this.linkFailed(LAYOUT_MARKER, e);
      this.settled = readLayoutMarker(this.root) ?? layout;
    } finally {
      await this.removeTemp(tmp);
    }
  }

  private async sweepStaleTemps(): Promise<void> {
    const dir = join(this.root, TMP_DIR);
    const now = Date.now();
    for (const name of await fs.readdir(dir)) {
      const p = join(dir, name);
      const st = await fs.stat(p).catch(() => null); // gone already: another process swept it
      if (st && isStaleTemp(name, now - st.mtimeMs, STALE_TMP_MS)) await fs.rm(p, { force: true });
    }
  }

  /**
   * A name no other temp file has: this process's owner tag (pid and instance), this module's tag and its counter. A
   * random suffix per temp cost a CSPRNG call each, about 30 ms of a 1,000-session first push.
   */
  private tempName(): string {
    return join(this.root, TMP_DIR, `${tempOwner()}-${TEMP_TAG}${(tempCount++).toString(36)}`);
  }

  /** A new temp file holding `body`, still open and not yet fsynced. */
  private async openTemp(tmp: string, key: string, body: BlobBody): Promise<number> {
    let fh: number | undefined;
    try {
      fh = openSync(tmp, 'wx', FILE_MODE);
      await writeAllFd(fh, body);
      return fh;
    } catch (e) {
      if (fh !== undefined) closeAfter(fh); // the write failed already; that error is the one to report
      throw unavailable('write', key, e);
    }
  }

  private async writeTemp(key: string, body: BlobBody): Promise<string> {
    await this.init();
    return this.writeTempFile(key, body);
  }

  /** A temp file holding `body`, fsynced and closed (the store's temp folder must exist). */
  private async writeTempFile(key: string, body: BlobBody): Promise<string> {
    const tmp = this.tempName();
    try {
      const fh = await this.openTemp(tmp, key, body);
      try {
        await fsyncFd(fh); // the data must be on disk before the name points at it
      } catch (e) {
        closeAfter(fh);
        throw e;
      }
      closeSync(fh);
    } catch (e) {
      await this.removeTemp(tmp);
      throw isSessyncError(e) ? e : unavailable('write', key, e);
    }
    return tmp;
  }

  /** Unlinks a temp file (one call: no stat first, as fs.rm would make); already gone is fine. */
  private async removeTemp(tmp: string): Promise<void> {
    try {
      unlinkSync(tmp);
    } catch (e) {
      if (errno(e) === 'ENOENT') return;
      // Not fatal: the next open sweeps it.
      console.warn(`sessync file store: could not remove temp file ${tmp}: ${(e as Error).message}`);
    }
  }

  /**
   * Links or renames the temp file to `path`. Its folder is made first unless this process knows it is there; a
   * folder pruned meanwhile by a concurrent delete (the link fails with ENOENT) is made again.
   */
  private intoPlace(key: string, path: string, place: () => void, ensured: Set<string>): void {
    const dir = dirname(path);
    for (let attempt = 0; ; attempt++) {
      let making = false;
      try {
        if (!this.known.has(dir) && !ensured.has(dir)) {
          making = true;
          this.ensureDir(dir, ensured);
          making = false;
        }
        place();
        return;
      } catch (e) {
        if (errno(e) !== 'ENOENT' || attempt >= MAX_DIR_RACES) {
          // A folder's error names the key it was for (Node's message names the folder); a link's is the caller's to word.
          if (making) throw unavailable('make the folder of', key, e);
          throw e;
        }
        this.known.delete(dir);
        ensured.delete(dir);
      }
    }
  }

  /**
   * Makes `dir` and any missing folder above it (mkdir of the folder first: for a write it is usually the only one
   * missing), recording in `ensured` each folder whose entry the names round must fsync in its parent.
   */
  private ensureDir(dir: string, ensured: Set<string>): void {
    try {
      mkdirSync(dir, { mode: DIR_MODE });
    } catch (e) {
      if (errno(e) === 'ENOENT' && dirname(dir) !== dir) {
        this.ensureDir(dirname(dir), ensured); // records the parent, and walks up from it
        // Once more only: a parent pruned again at once fails the link, and intoPlace's bounded retries take over.
        this.makeDirAgain(dir);
        ensured.add(dir);
        return;
      }
      if (errno(e) !== 'EEXIST') throw e;
    }
    // Made or found, its parent may be a folder nobody this process saw made durable: left by a process killed
    // mid-chain (mkdir -p), by a failed group, or made by a concurrent group of this process still in its names round.
    // The parent is found (recorded) the same way, up to a folder this process knows (the root at the latest), so the
    // names round fsyncs each entry on the way as if made here.
    const up = dirname(dir);
    if (dir !== this.root && up !== dir && !this.known.has(up) && !ensured.has(up)) this.ensureDir(up, ensured);
    ensured.add(dir);
  }

  private makeDirAgain(dir: string): void {
    try {
      mkdirSync(dir, { mode: DIR_MODE });
    } catch (e) {
      if (errno(e) !== 'EEXIST') throw e;
    }
  }

  /** Makes a new directory entry durable. Platforms that cannot fsync a directory (Windows) skip it. */
  private async syncDir(dir: string): Promise<void> {
    let fh: number | undefined;
    try {
      fh = openSync(dir, 'r');
      await fsyncFd(fh);
    } catch (e) {
      if (!['EISDIR', 'EPERM', 'EINVAL', 'EACCES'].includes(errno(e) ?? '')) throw e;
    } finally {
      if (fh !== undefined) closeAfter(fh); // a directory opened read-only: its close changes nothing
    }
  }

  /** Removes directories a delete left empty, up to the root; a racing writer recreates what it needs. */
  private pruneEmptyDirs(dir: string): void {
    while (dir.length > this.root.length && dir.startsWith(this.root)) {
      try {
        rmdirSync(dir);
      } catch (e) {
        if (errno(e) === 'ENOTEMPTY' || errno(e) === 'EEXIST' || errno(e) === 'ENOENT') return;
        throw unavailable('delete', dir, e);
      }
      this.known.delete(dir);
      dir = dirname(dir);
    }
  }
}
