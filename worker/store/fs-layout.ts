// The file store's layout: how many directory levels a key's segments take before the rest of the key names one file.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { errno, unavailable } from './fs-errors.js';
import { FILE_MARK, MAX_NAME_BYTES, decodeEntryName, encodeSegment } from './fs-names.js';

/**
 * A key's first `dirLevels` segments are directories; the rest of it, joined by '/' and encoded as one name, is its
 * file. With 4 levels a batch `a/<acct>/s/<session>/b/<host>/<seq>` is the file `b%2f<host>%2f<seq>~` in the
 * session's folder: a new session makes one folder for its objects, where one folder per segment made five (each a
 * directory block and an inode to write and sync). The levels kept are the ones listings start from (an account, a
 * session's objects), so a list never reads more than one session's folder to answer a question about its objects.
 */
export interface FsLayout {
  /** Directory levels a key takes at most; Infinity: one per segment but the last (the layout of stores without a marker). */
  readonly dirLevels: number;
  /**
   * Set: the heads `a/<acct>/heads/<session>/...` lie in this many shard folders, the folder standing where the
   * session's segment would: the head `a/<acct>/heads/<session>/<host>/<seq>` is the file
   * `<session>%2f<host>%2f<seq>~` in `a/<acct>/heads/<shard>/`, the shard a hash of the session id (shardOf). A new
   * session then makes no heads folder of its own once its shard is there, and the heads of one request share a few
   * folders' fsyncs. A hash, not the id's first characters: ids made by time (UUIDv7, as sessync makes them) share their
   * first characters for years, which would put an account's every session in one shard, and each batch's listing of
   * its session's heads would read the whole account's (measured: 0.69 ms a listing at 1,000 sessions against 0.03).
   * The price: a listing of all the account's heads reads every shard and merges them into key order.
   */
  readonly shards?: number;
}

/** What a store without a marker holding objects was written in, by a version before the marker: kept as it is. */
export const NESTED: FsLayout = { dirLevels: Infinity };
/** What a fresh store was written in before heads were sharded: kept as it is. */
export const FLAT: FsLayout = { dirLevels: 4 };
/** What a fresh store is written in. */
export const SHARDED: FsLayout = { dirLevels: 4, shards: 64 };
/** In the root; a dot name, which no key maps to and listings skip. */
export const LAYOUT_MARKER = '.layout';

export function markerText(layout: FsLayout): string {
  const record = !Number.isFinite(layout.dirLevels) ? { layout: 'nested' } : layout.shards ? { layout: 'sharded-heads', dirLevels: layout.dirLevels, shards: layout.shards, hash: 'fnv1a32' } : { layout: 'flat', dirLevels: layout.dirLevels };
  return JSON.stringify(record) + '\n';
}

function parseMarker(text: string, where: string): FsLayout {
  let v: { layout?: unknown; dirLevels?: unknown; shards?: unknown; hash?: unknown } | null = null;
  try {
    v = JSON.parse(text) as { layout?: unknown; dirLevels?: unknown; shards?: unknown; hash?: unknown } | null;
  } catch {
    // reported below, with the rest of what this version cannot read
  }
  if (v?.layout === 'nested') return NESTED;
  if (v?.layout === 'flat' && Number.isSafeInteger(v.dirLevels) && (v.dirLevels as number) >= 1) return { dirLevels: v.dirLevels as number };
  // The shard folder takes the level of the heads' first segment: there must be one.
  if (v?.layout === 'sharded-heads' && Number.isSafeInteger(v.dirLevels) && (v.dirLevels as number) >= HEADS_DEPTH + 1 && v.hash === 'fnv1a32' && Number.isSafeInteger(v.shards) && (v.shards as number) >= 1 && (v.shards as number) <= MAX_SHARDS) {
    return { dirLevels: v.dirLevels as number, shards: v.shards as number };
  }
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

/** Key segments before a head's own (`a`, the account, `heads`): the level a sharded layout's shard folder takes. */
export const HEADS_DEPTH = 3;
const HEADS_BASE = /^a\/[^/]+\/heads\/$/;
const MAX_SHARDS = 1 << 16;

/** Whether the key prefix `base` ('' or ending in '/') is an account's heads folder, whose folders are shards. */
export function isHeadsBase(layout: FsLayout, base: string): boolean {
  return layout.shards !== undefined && HEADS_BASE.test(base);
}

/** Hex digits of a shard's name: every shard's name has the same length, that of the highest. */
function shardDigits(layout: FsLayout): number {
  return Math.max(1, (layout.shards! - 1).toString(16).length);
}

/**
 * The shard of a heads key's part after `a/<acct>/heads/`: FNV-1a (32 bits, over the UTF-16 code units) of its first
 * segment, the session id, modulo the layout's shards, in lowercase hex. Part of the format on disk: never change it.
 */
export function shardOf(layout: FsLayout, rest: string): string {
  const end = rest.indexOf('/');
  const n = end < 0 ? rest.length : end;
  let h = 0x811c9dc5;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ rest.charCodeAt(i), 0x01000193);
  return ((h >>> 0) % layout.shards!).toString(16).padStart(shardDigits(layout), '0');
}

/** Whether a folder's name in the heads folder is one of the layout's shards. */
export function isShardName(layout: FsLayout, name: string): boolean {
  return name.length === shardDigits(layout) && /^[0-9a-f]+$/.test(name) && parseInt(name, 16) < layout.shards!;
}

/**
 * Where a (valid) key's file lies: its folders' names, outermost first, and its file's name. Below the layout's levels
 * the rest of the key is one name; where that name would be too long for a file system, the key takes one more folder
 * level at a time until it fits (every segment alone fits: validateKey), so every key has exactly one place. A sharded
 * head's shard folder counts as a level, as if it were a segment of the key.
 */
export function placeKey(layout: FsLayout, segs: readonly string[]): { dirs: string[]; name: string } {
  if (layout.shards !== undefined && segs.length > HEADS_DEPTH && segs[0] === 'a' && segs[2] === 'heads') {
    const rest = segs.slice(HEADS_DEPTH);
    return placeSegs(layout.dirLevels, [...segs.slice(0, HEADS_DEPTH), shardOf(layout, rest.join('/')), ...rest]);
  }
  return placeSegs(layout.dirLevels, segs);
}

function placeSegs(dirLevels: number, segs: readonly string[]): { dirs: string[]; name: string } {
  let d = Math.min(dirLevels, segs.length - 1);
  let name = encodeSegment(d === segs.length - 1 ? segs[d]! : segs.slice(d).join('/')) + FILE_MARK;
  while (name.length > MAX_NAME_BYTES) {
    d++;
    name = encodeSegment(segs.slice(d).join('/')) + FILE_MARK;
  }
  return { dirs: segs.slice(0, d).map(encodeSegment), name };
}

/** A shard folder the walk is in (or below): its name, and the heads prefix its keys' rest follows. */
export interface ShardAt {
  readonly shard: string;
  readonly headsBase: string;
}

/**
 * The key a file stands for, found `depth` folders down (under the key prefix `base`) and named for `tail`; null when
 * placeKey would put that key elsewhere (a file this store did not write there), so no key is ever listed twice.
 * Inside a shard (`at`) the shard folder is not a segment of `base`, and the key must be one of that shard.
 */
export function fileKey(layout: FsLayout, base: string, depth: number, tail: string, at?: ShardAt): string | null {
  if (at) {
    const key = fileKeyAt(layout.dirLevels - 1, base, depth - 1, tail);
    return key !== null && shardOf(layout, key.slice(at.headsBase.length)) === at.shard ? key : null;
  }
  if (isHeadsBase(layout, base)) return null; // a sharded heads folder holds shard folders only
  return fileKeyAt(layout.dirLevels, base, depth, tail);
}

function fileKeyAt(dirLevels: number, base: string, depth: number, tail: string): string | null {
  const parts = tail.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return null;
  const levels = Math.min(dirLevels, depth + parts.length - 1);
  if (depth < levels) return null;
  // Deeper than the layout's levels only when the name one level up would not have fitted.
  if (depth > levels && encodeSegment(base.slice(base.lastIndexOf('/', base.length - 2) + 1) + tail).length + FILE_MARK.length <= MAX_NAME_BYTES) return null;
  return base + tail;
}
