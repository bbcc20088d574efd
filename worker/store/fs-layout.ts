// The file store's layout: how many directory levels a key's segments take before the rest of the key names one file.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { errno, unavailable } from './fs-errors.js';
import { FILE_MARK, MAX_NAME_BYTES, decodeEntryName, encodeSegment } from './fs-names.js';

/**
 * A key's first `dirLevels` segments are directories; the rest of it, joined by '/' and encoded as one name, is its
 * file. With 4 levels a batch `a/<acct>/s/<session>/b/<host>/<seq>` is the file `b%2f<host>%2f<seq>~` in the
 * session's folder, and its head the file `<host>%2f<seq>~` in `a/<acct>/heads/<session>/`: a new session makes two
 * folders, where one folder per segment made five (each a directory block and an inode to write, journal and sync).
 * The levels kept are the ones listings start from (an account, a session's objects, a session's heads), so a list
 * never reads more than one session's folder to answer a question about that session.
 */
export interface FsLayout {
  /** Directory levels a key takes at most; Infinity: one per segment but the last (the layout of stores without a marker). */
  readonly dirLevels: number;
}

/** What a store without a marker holding objects was written in, by a version before the marker: kept as it is. */
export const NESTED: FsLayout = { dirLevels: Infinity };
/** What a fresh store is written in. */
export const FLAT: FsLayout = { dirLevels: 4 };
/** In the root; a dot name, which no key maps to and listings skip. */
export const LAYOUT_MARKER = '.layout';

export function markerText(layout: FsLayout): string {
  const record = Number.isFinite(layout.dirLevels) ? { layout: 'flat', dirLevels: layout.dirLevels } : { layout: 'nested' };
  return JSON.stringify(record) + '\n';
}

function parseMarker(text: string, where: string): FsLayout {
  let v: { layout?: unknown; dirLevels?: unknown } | null = null;
  try {
    v = JSON.parse(text) as { layout?: unknown; dirLevels?: unknown } | null;
  } catch {
    // reported below, with the rest of what this version cannot read
  }
  if (v?.layout === 'nested') return NESTED;
  if (v?.layout === 'flat' && Number.isSafeInteger(v.dirLevels) && (v.dirLevels as number) >= 1) return { dirLevels: v.dirLevels as number };
  throw new SessyncError('unavailable', `file store: ${where} names a layout this version of sessync does not know (${text.trim().slice(0, 80)}); run the version that wrote the store, or a newer one`, { retryable: false });
}

/** The layout the root's marker names; null when it has none (a fresh store, or one an older version wrote). */
export function readLayoutMarker(root: string): FsLayout | null {
  const path = join(root, LAYOUT_MARKER);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return null;
    throw unavailable('open', path, e);
  }
  return parseMarker(text, path);
}

/**
 * Whether the root holds any object (a name this store could have made: not a dot name, and not what a file system puts
 * in a mount point's root, such as `lost+found`): a store without a marker that does was written nested.
 */
export function holdsObjects(root: string): boolean {
  try {
    return readdirSync(root).some((n) => !n.startsWith('.') && decodeEntryName(n) !== null);
  } catch (e) {
    if (errno(e) === 'ENOENT') return false;
    throw unavailable('open', root, e);
  }
}

/**
 * Where a (valid) key's file lies: its folders' names, outermost first, and its file's name. Below the layout's levels
 * the rest of the key is one name; where that name would be too long for a file system, the key takes one more folder
 * level at a time until it fits (every segment alone fits: validateKey), so every key has exactly one place.
 */
export function placeKey(layout: FsLayout, segs: readonly string[]): { dirs: string[]; name: string } {
  let d = Math.min(layout.dirLevels, segs.length - 1);
  let name = encodeSegment(d === segs.length - 1 ? segs[d]! : segs.slice(d).join('/')) + FILE_MARK;
  while (name.length > MAX_NAME_BYTES) {
    d++;
    name = encodeSegment(segs.slice(d).join('/')) + FILE_MARK;
  }
  return { dirs: segs.slice(0, d).map(encodeSegment), name };
}

/**
 * The key a file stands for, found `depth` folders down (under the key prefix `base`) and named for `tail`; null when
 * placeKey would put that key elsewhere (a file this store did not write there), so no key is ever listed twice.
 */
export function fileKey(layout: FsLayout, base: string, depth: number, tail: string): string | null {
  const parts = tail.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return null;
  const levels = Math.min(layout.dirLevels, depth + parts.length - 1);
  if (depth < levels) return null;
  // Deeper than the layout's levels only when the name one level up would not have fitted.
  if (depth > levels && encodeSegment(base.slice(base.lastIndexOf('/', base.length - 2) + 1) + tail).length + FILE_MARK.length <= MAX_NAME_BYTES) return null;
  return base + tail;
}
