// The file store's list: keys under a prefix in ascending (UTF-8 byte) order, by a walk of the folders the layout made.
import { promises as fs, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compareKeys } from './key-order.js';
import { errno, unavailable } from './fs-errors.js';
import { fileKey, type FsLayout } from './fs-layout.js';
import { decodeEntryName, encodeSegment, validateKey } from './fs-names.js';

/** A directory no larger than this (one block on ext4; a few names on tmpfs, xfs, btrfs, apfs) is listed synchronously. */
const SMALL_DIR_BYTES = 4096;

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

function validPrefixDir(base: string): boolean {
  try {
    validateKey(base + 'x');
    return true;
  } catch {
    // A prefix no valid key can have (e.g. containing '..') matches nothing: an empty page, not an error.
    return false;
  }
}

interface Entry {
  full: string;
  isDir: boolean;
  /** For a directory: its name on disk. */
  name?: string;
  /** For a directory: keys of files above it whose names fall in its range (see walk). */
  inside?: string[];
}

/** One listing's walk: the keys found so far, in order, up to `want`. */
class Walk {
  readonly out: string[] = [];

  constructor(
    private readonly root: string,
    private readonly layout: FsLayout,
    private readonly prefix: string,
    private readonly after: string,
    private readonly want: number,
  ) {}

  /**
   * Depth-first in key order, skipping subtrees that lie wholly at or before `after`. `base` is the folder's key
   * prefix ('' or ending in '/'), `dirs` its path's names, `above` keys of files in folders above that fall under it.
   * A directory sorts as its name plus '/', which is exactly where its keys fall among their siblings; the one
   * exception is a file whose name holds several segments beside a folder named for the first of them (a key too
   * long to fit one name below the layout's levels took a folder more), and those are listed inside that folder's walk.
   */
  async walk(base: string, dirs: string[], above: string[]): Promise<void> {
    const dir = join(this.root, ...dirs);
    let names: string[];
    try {
      names = await readNames(dir);
    } catch (e) {
      // A directory pruned by a concurrent delete, or one never created: no keys there.
      if (errno(e) !== 'ENOENT' && errno(e) !== 'ENOTDIR') throw unavailable('list', this.prefix, e);
      names = [];
    }
    const entries: Entry[] = above.map((full) => ({ full, isDir: false }));
    const folders = new Map<string, Entry>();
    const deep: string[] = [];
    for (const name of names) {
      const d = decodeEntryName(name);
      const full = d && (d.isDir ? (d.segment.includes('/') ? null : base + d.segment + '/') : fileKey(this.layout, base, dirs.length, d.segment));
      if (!d || !full) {
        // Dotfiles (our temp dir, the layout marker, .DS_Store) are not objects; anything else is a stray worth a warning.
        if (!name.startsWith('.')) console.warn(`sessync file store: ignoring ${join(dir, name)}: not a stored object`);
        continue;
      }
      if (d.isDir) {
        if (!(full.startsWith(this.prefix) || this.prefix.startsWith(full))) continue;
        if (compareKeys(full, this.after) <= 0 && !this.after.startsWith(full)) continue;
        const e: Entry = { full, isDir: true, name, inside: [] };
        folders.set(d.segment, e);
        entries.push(e);
      } else {
        if (!full.startsWith(this.prefix) || compareKeys(full, this.after) <= 0) continue;
        if (d.segment.includes('/')) deep.push(full);
        else entries.push({ full, isDir: false });
      }
    }
    for (const full of deep) {
      const folder = folders.get(full.slice(base.length, full.indexOf('/', base.length)));
      if (folder) folder.inside!.push(full);
      else entries.push({ full, isDir: false });
    }
    entries.sort((a, b) => compareKeys(a.full, b.full));
    for (const e of entries) {
      if (this.out.length >= this.want) return;
      if (!e.isDir) this.out.push(e.full);
      else await this.walk(e.full, [...dirs, e.name!], e.inside!);
    }
  }
}

/**
 * Up to `want` keys under `prefix` greater than `after`, ascending. The walk starts at the deepest folder the prefix
 * names in full, within the layout's levels; the rest of the prefix filters what it finds.
 */
export async function listKeys(root: string, layout: FsLayout, prefix: string, after: string, want: number): Promise<string[]> {
  const slash = prefix.lastIndexOf('/');
  const named = slash < 0 ? [] : prefix.slice(0, slash).split('/');
  if (named.length > 0 && !validPrefixDir(prefix.slice(0, slash + 1))) return [];
  const segs = named.slice(0, Math.min(named.length, layout.dirLevels));
  const dirs = segs.map(encodeSegment);
  // A listing under a directory never made (a new session's heads, a tombstone that is not there) is the common
  // empty answer: a stat tells it without a thread-pool round trip and the error a failed readdir makes.
  try {
    if (statSync(join(root, ...dirs), { throwIfNoEntry: false })?.isDirectory() !== true) return [];
  } catch (e) {
    if (errno(e) === 'ENOTDIR') return []; // a file where a directory would be: no keys there, as walk finds
    throw unavailable('list', prefix, e);
  }
  const walk = new Walk(root, layout, prefix, after, want);
  await walk.walk(segs.length ? segs.join('/') + '/' : '', dirs, []);
  return walk.out;
}
