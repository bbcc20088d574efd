// File-system BlobStore: one file per key under a root directory, atomic put-if-absent across processes.
import { compareKeys } from './key-order.js';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readSync, readdirSync, renameSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { closeAfter, fsyncFd, readFd, writeAllFd } from './fd-io.js';
import { dirname, join } from 'node:path';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import type { BlobBody, BlobObject, BlobStore, BlobWrite, ListOptions, ListPage } from './blob-store.js';
import { isStaleTemp, tempOwner } from './stale-temps.js';

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
/** A directory no larger than this (one block on ext4; a few names on tmpfs, xfs, btrfs, apfs) is listed synchronously. */
const SMALL_DIR_BYTES = 4096;
/** An object no larger than this is read synchronously (one bounded read); larger ones on the thread pool. */
const SMALL_READ_BYTES = 16 * 1024;

const MAX_KEY_BYTES = 1024;
/** Most file systems cap one name at 255 bytes. */
const MAX_NAME_BYTES = 255;
/** Appended to the last segment's name so a key `a/b` (a file) and keys `a/b/...` (a directory) can coexist. */
const FILE_MARK = '~';
const utf8 = new TextEncoder();
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws bad_input for a key that no backend should hold: nothing here can climb out of the root. */
export function validateKey(key: string): void {
  const bad = (why: string) => new SessyncError('bad_input', `object key "${key.slice(0, 80)}" ${why}`);
  if (typeof key !== 'string' || key.length === 0) throw bad('is empty');
  if (LONE_SURROGATE.test(key)) throw bad('is not valid Unicode');
  if (utf8.encode(key).length > MAX_KEY_BYTES) throw bad(`is longer than ${MAX_KEY_BYTES} bytes`);
  if (/[\u0000-\u001f\u007f]/.test(key)) throw bad('contains a control character');
  for (const seg of key.split('/')) {
    if (seg === '') throw bad('has an empty path segment (leading, trailing or double /)');
    if (seg === '.' || seg === '..') throw bad('has a . or .. path segment');
    if (encodeSegment(seg).length + FILE_MARK.length > MAX_NAME_BYTES) throw bad(`has a segment too long for a file name`);
  }
}

/**
 * One key segment as a file name that means the same on every file system: lowercase letters,
 * digits, '_', '-' and non-leading '.' stay; every other byte becomes %xx (lowercase hex).
 * Uppercase letters are written in lowercase and remembered in a trailing '@' + hex bitmask,
 * so `Foo` and `foo` stay two files where names are case-insensitive (macOS, Windows) and the
 * names stay short (a 128-letter name needs 161 bytes). The output never starts with '.',
 * never contains '~', and only in the mask contains '@'.
 */
export function encodeSegment(seg: string): string {
  let out = '';
  const upper: number[] = [];
  for (const ch of seg) {
    if (/^[a-z0-9_-]$/.test(ch) || (ch === '.' && out !== '')) out += ch;
    else if (/^[A-Z]$/.test(ch)) {
      upper.push(out.length);
      out += ch.toLowerCase();
    } else for (const b of utf8.encode(ch)) out += '%' + b.toString(16).padStart(2, '0');
  }
  if (upper.length === 0) return out;
  const mask = new Uint8Array(Math.ceil(out.length / 4));
  for (const i of upper) mask[i >> 2]! |= 1 << (i & 3);
  return out + '@' + Array.from(mask, (n) => n.toString(16)).join('');
}

/** The segment a file or directory name stands for, or null when it is not one encodeSegment makes. */
export function decodeEntryName(name: string): { segment: string; isDir: boolean } | null {
  const isDir = !name.endsWith(FILE_MARK);
  const enc = isDir ? name : name.slice(0, -FILE_MARK.length);
  const at = enc.indexOf('@');
  const body = at < 0 ? enc : enc.slice(0, at);
  if (!/^(?:[a-z0-9_.-]|%[0-9a-f]{2})+$/.test(body)) return null;
  const chars = body.split('');
  if (at >= 0) {
    const mask = enc.slice(at + 1);
    if (!/^[0-9a-f]+$/.test(mask)) return null;
    for (let i = 0; i < chars.length; i++) {
      if ((parseInt(mask[i >> 2] ?? '0', 16) >> (i & 3)) & 1) chars[i] = chars[i]!.toUpperCase();
    }
  }
  let segment: string;
  try {
    segment = decodeURIComponent(chars.join(''));
  } catch {
    return null; // not UTF-8 underneath: not a name this store wrote
  }
  // Only the canonical spelling counts, so one key never has two files.
  return encodeSegment(segment) === enc ? { segment, isDir } : null;
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

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

function unavailable(op: string, key: string, e: unknown): SessyncError {
  const code = errno(e);
  // Out of space, quota, read-only file system and permissions need an operator; EMFILE/EAGAIN/EBUSY pass.
  const retryable = !['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTSUP', 'EXDEV'].includes(code ?? '');
  return new SessyncError('unavailable', `file store: ${op} ${key} failed: ${(e as Error).message}`, { retryable, cause: e });
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
 * A directory's names. One of a single block (a session's heads, a host's head: a few entries, the bulk of a pull's
 * listings) is read synchronously, as open and stat are: a bounded read, cheaper than the thread-pool round trip and
 * promise an asynchronous readdir costs. A larger one, which may hold any number of names, goes to the thread pool.
 */
async function readNames(dir: string): Promise<string[]> {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st === undefined) throw Object.assign(new Error(`no directory ${dir}`), { code: 'ENOENT' });
  return st.size <= SMALL_DIR_BYTES ? readdirSync(dir) : fs.readdir(dir);
}

/**
 * Keys map to files under `root` (see encodeSegment: safe on case-insensitive and
 * normalising file systems, never `.`/`..`). Writes go to a temp file that is fsynced and then
 * linked (put-if-absent: link fails with EEXIST when the key exists, atomically, whatever
 * process raced it) or renamed (put: atomic replace) into place. Readers never see a partial file.
 *
 * Calls that only touch directory entries and open files (open, close, link, rename, unlink, mkdir, rmdir,
 * stat) are made synchronously: they take microseconds, less than the CPU a thread-pool round trip costs (a push
 * made about twenty of them). The calls that wait for the disk (fsync, a file's data read or written, and
 * listings of directories larger than one block, which can be long) go to the thread pool and never block the event loop.
 */
export class FsStore implements BlobStore {
  private ready: Promise<void> | undefined;

  constructor(readonly root: string) {}

  /**
   * Creates the root (0700) or narrows an existing one, and removes the temp files of writers that
   * died (kill -9, power loss). Servers call it on start; writes call it on first use anyway.
   */
  open(): Promise<void> {
    return this.init();
  }

  get(key: string): Promise<BlobObject | null> {
    return this.read(key);
  }

  async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    const path = this.pathOf(key);
    const tmp = await this.writeTemp(key, body);
    try {
      return await this.place({ key, body }, path, tmp, true);
    } finally {
      await this.removeTemp(tmp);
    }
  }

  async put(key: string, body: BlobBody): Promise<void> {
    const path = this.pathOf(key);
    const tmp = await this.writeTemp(key, body);
    try {
      await this.place({ key, body, replace: true }, path, tmp, true);
    } catch (e) {
      await this.removeTemp(tmp); // renamed into place, the temp name is gone already: only a failure leaves it
      throw e;
    }
  }

  /**
   * Group commit: every temp file is written, then all are fsynced in one round, then linked or renamed into
   * place, then each directory that got a new name is fsynced once. The guarantees per write are those of
   * putIfAbsent and put (nothing is named before its data is on disk, nothing is reported before its name is),
   * at one round of fsyncs for the group instead of two fsyncs per write one after the other.
   */
  async writeMany(writes: readonly BlobWrite[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < writes.length; i += GROUP_OPEN_FILES) out.push(...(await this.writeGroup(writes.slice(i, i + GROUP_OPEN_FILES))));
    return out;
  }

  private async writeGroup(writes: readonly BlobWrite[]): Promise<boolean[]> {
    const paths = writes.map((w) => this.pathOf(w.key)); // bad keys refuse the group before anything is written
    await this.init();
    const temps: string[] = [];
    /** Temps renamed into place (put): their name is gone, nothing to remove. */
    const renamed = new Set<string>();
    try {
      const handles = await Promise.allSettled(writes.map(async (w) => {
        const tmp = this.tempName();
        temps.push(tmp);
        return { tmp, fh: await this.openTemp(tmp, w.key, w.body) };
      }));
      const opened = handles.flatMap((h) => (h.status === 'fulfilled' ? [h.value] : []));
      try {
        const failed = handles.find((h) => h.status === 'rejected');
        if (failed) throw failed.reason;
        // The one fsync round: the data of every write on disk before any name points at it.
        await Promise.all(opened.map(({ fh }, i) => fsyncFd(fh).catch((e) => Promise.reject(unavailable('write', writes[i]!.key, e)))));
      } finally {
        // Each closed whatever the others do; after a successful sync a close changes nothing stored either.
        for (const { fh } of opened) closeAfter(fh);
      }
      const placed = await Promise.allSettled(writes.map(async (w, i) => {
        const created = await this.place(w, paths[i]!, opened[i]!.tmp, false);
        if (w.replace) renamed.add(opened[i]!.tmp);
        return created;
      }));
      const refused = placed.find((p) => p.status === 'rejected');
      if (refused) throw refused.reason; // the others may be in place, each whole: a retry finds them
      const created = placed.map((p) => (p as PromiseFulfilledResult<boolean>).value);
      // Names made durable once per directory, before any write of the group is reported stored.
      const dirs = new Set(paths.filter((_, i) => created[i]).map((p) => dirname(p)));
      await Promise.all([...dirs].map((d) => this.syncDir(d).catch((e) => Promise.reject(unavailable('write', d, e)))));
      return created;
    } finally {
      await Promise.all(temps.filter((t) => !renamed.has(t)).map((t) => this.removeTemp(t)));
    }
  }

  /** Links (put-if-absent) or renames (put) a synced temp file into place; `syncDir` false when the caller syncs the directory. */
  private async place(w: BlobWrite, path: string, tmp: string, syncDir: boolean): Promise<boolean> {
    try {
      await this.intoPlace(path, () => (w.replace ? renameSync(tmp, path) : linkSync(tmp, path)), syncDir);
      return true;
    } catch (e) {
      if (w.replace) throw unavailable('put', w.key, e);
      if (errno(e) === 'EEXIST') return false;
      if (errno(e) === 'EPERM' || errno(e) === 'ENOTSUP' || errno(e) === 'EOPNOTSUPP') {
        throw new SessyncError('unavailable', `file store: ${this.root} is on a file system without hard links, which atomic put-if-absent needs; use a local disk (ext4, xfs, apfs, ntfs)`, { retryable: false, cause: e });
      }
      throw unavailable('put-if-absent', w.key, e);
    }
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? MAX_PAGE), 1), MAX_PAGE);
    const prefix = opts.prefix ?? '';
    // The cursor is the last key of the previous page; it supersedes startAfter.
    const after = opts.cursor ?? opts.startAfter ?? '';
    // Start at the deepest directory the prefix names in full; the rest of the prefix filters its entries.
    const slash = prefix.lastIndexOf('/');
    const base = slash < 0 ? '' : prefix.slice(0, slash + 1);
    if (base && !this.validPrefixDir(base)) return { keys: [] };
    // A listing under a directory never made (a new session's heads, a tombstone that is not there) is the common
    // empty answer: a stat tells it without a thread-pool round trip and the error a failed readdir makes.
    if (!this.dirExists(base)) return { keys: [] };
    const found: string[] = [];
    await this.walk(base, prefix, after, limit + 1, found);
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
    await this.pruneEmptyDirs(dirname(path));
  }

  /** Absolute file path of a key; throws bad_input for keys that could not be stored safely. */
  pathOf(key: string): string {
    validateKey(key);
    const segs = key.split('/');
    return join(this.root, ...segs.slice(0, -1).map(encodeSegment), encodeSegment(segs[segs.length - 1]!) + FILE_MARK);
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

  /** The directory holding the keys under `base` (a prefix ending in '/', or '' for the root). */
  private dirOf(base: string): string {
    return join(this.root, ...base.split('/').slice(0, -1).map(encodeSegment));
  }

  private dirExists(base: string): boolean {
    try {
      return statSync(this.dirOf(base), { throwIfNoEntry: false })?.isDirectory() === true;
    } catch (e) {
      if (errno(e) === 'ENOTDIR') return false; // a file where a directory would be: no keys there, as walk finds
      throw unavailable('list', base, e);
    }
  }

  /** Depth-first walk in key order (UTF-8 byte order), skipping subtrees that lie wholly at or before `after`. */
  private async walk(base: string, prefix: string, after: string, want: number, out: string[]): Promise<void> {
    const dir = this.dirOf(base);
    let names: string[];
    try {
      names = await readNames(dir);
    } catch (e) {
      // A directory pruned by a concurrent delete, or one never created: no keys there.
      if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return;
      throw unavailable('list', prefix, e);
    }
    const entries: { full: string; isDir: boolean }[] = [];
    for (const name of names) {
      const d = decodeEntryName(name);
      if (!d) {
        // Dotfiles (our temp dir, .DS_Store) are not objects; anything else is a stray file worth a warning.
        if (!name.startsWith('.')) console.warn(`sessync file store: ignoring ${join(dir, name)}: not a stored object`);
        continue;
      }
      const full = base + d.segment + (d.isDir ? '/' : '');
      if (!(full.startsWith(prefix) || (d.isDir && prefix.startsWith(full)))) continue;
      if (d.isDir ? compareKeys(full, after) <= 0 && !after.startsWith(full) : compareKeys(full, after) <= 0) continue;
      entries.push({ full, isDir: d.isDir });
    }
    // A directory sorts as its name plus '/', which is exactly where its keys fall among their siblings.
    entries.sort((a, b) => compareKeys(a.full, b.full));
    for (const e of entries) {
      if (out.length >= want) return;
      if (e.isDir) await this.walk(e.full, prefix, after, want, out);
      else out.push(e.full);
    }
  }

  private validPrefixDir(base: string): boolean {
    try {
      validateKey(base + 'x');
      return true;
    } catch {
      // A prefix no valid key can have (e.g. containing '..') matches nothing: an empty page, not an error.
      return false;
    }
  }

  private init(): Promise<void> {
    this.ready ??= (async () => {
      await fs.mkdir(join(this.root, TMP_DIR), { recursive: true, mode: DIR_MODE });
      // An existing root (made by hand, or by an older version) is narrowed: that closes everything below it.
      await narrowToOwner(this.root);
      await this.sweepStaleTemps();
    })().catch((e) => {
      this.ready = undefined;
      throw unavailable('open', this.root, e);
    });
    return this.ready;
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

  private tempName(): string {
    return join(this.root, TMP_DIR, `${tempOwner()}-${randomBytes(8).toString('hex')}`);
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

  /** Links or renames the temp file to `path`, recreating its directory when a concurrent delete pruned it. */
  private async intoPlace(path: string, place: () => void, syncDir = true): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        place();
        if (syncDir) await this.syncDir(dirname(path));
        return;
      } catch (e) {
        if (errno(e) !== 'ENOENT' || attempt >= MAX_DIR_RACES) throw e;
        mkdirSync(dirname(path), { recursive: true, mode: DIR_MODE });
      }
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
  private async pruneEmptyDirs(dir: string): Promise<void> {
    while (dir.length > this.root.length && dir.startsWith(this.root)) {
      try {
        rmdirSync(dir);
      } catch (e) {
        if (errno(e) === 'ENOTEMPTY' || errno(e) === 'EEXIST' || errno(e) === 'ENOENT') return;
        throw unavailable('delete', dir, e);
      }
      dir = dirname(dir);
    }
  }
}
