// The storage seam: the few operations the sync service needs from any object store.
import { concatChunks } from '../../shared/batch-frames.js';

/** A stored object. `body` is the exact bytes that were put (the parts of a BlobBody, joined). */
export interface BlobObject {
  key: string;
  body: Uint8Array;
  /** Opaque version tag (ETag or equivalent); changes whenever the content does. */
  etag: string;
}

export interface ListPage {
  keys: string[];
  /** Present when more keys follow: pass it back as `cursor` to get the next page. */
  cursor?: string;
}

export interface ListOptions {
  /** Only keys that start with this prefix. */
  prefix?: string;
  /** Only keys strictly greater than this one (lexicographic, by UTF-8 bytes). */
  startAfter?: string;
  /** Continuation token from the previous page. */
  cursor?: string;
  /** At most this many keys (backends may cap it at 1,000). Default 1,000. */
  limit?: number;
}

/**
 * What a write stores: bytes, or parts whose concatenation is the object (a record's header and the body it frames,
 * so a megabyte body is not copied into one buffer first; the file store writes the parts with one writev).
 */
export type BlobBody = Uint8Array | readonly Uint8Array[];

/** The bytes of a body given in parts, joined (one copy); a plain body as it is. */
export function joinBody(body: BlobBody): Uint8Array {
  if (!Array.isArray(body)) return body as Uint8Array;
  return body.length === 1 ? body[0]! : concatChunks(body as Uint8Array[]);
}

/** One write of a group (see BlobStore.writeMany). */
export interface BlobWrite {
  key: string;
  body: BlobBody;
  /** Replace whatever is there (put); default: only if the key does not exist (putIfAbsent). */
  replace?: boolean;
}

/**
 * Every backend (R2, S3, file system, memory) implements this and passes
 * test/worker/blob-store.case.ts. Keys are built only by shared/keys.ts and are never
 * taken from user input unchecked.
 */
export interface BlobStore {
  /** The object, or `null` when the key does not exist. Never throws for not-found. */
  get(key: string): Promise<BlobObject | null>;

  /**
   * Writes the object only if the key does not exist yet.
   * Returns `true` when this call created it, `false` when the key already existed
   * (whatever its content: the caller compares with `get` when it matters).
   * Of N concurrent calls on one free key exactly one returns `true`.
   * Transient backend conflicts are retried inside; other failures throw SessyncError('unavailable').
   */
  putIfAbsent(key: string, body: BlobBody): Promise<boolean>;

  /**
   * Writes the object whatever is there (last writer wins). Only for objects with one
   * writer by construction (indexes, tokens); entry batches always use putIfAbsent.
   */
  put(key: string, body: BlobBody): Promise<void>;

  /** Keys in ascending order, one page at a time; follow `cursor` until it is absent. */
  list(opts?: ListOptions): Promise<ListPage>;

  /** Removes the key. Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;

  /**
   * Optional: several writes made durable together, for a backend where durability costs per write (the file
   * system's fsync). Each result is what putIfAbsent (created or not) or put (true) returns for that write, and
   * every write is durable when the call resolves. When it throws, any subset of the writes may be stored, each
   * one whole. Object stores make every put durable on its own and leave it out (see worker/store/group-commit.ts).
   */
  writeMany?(writes: readonly BlobWrite[]): Promise<boolean[]>;
}
