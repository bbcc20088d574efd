// A BlobStore that keeps every object under a fixed key prefix of another store (`s3://bucket/prefix`).
import type { BlobBody, BlobObject, BlobStore, BlobWrite, ListOptions, ListPage } from './blob-store.js';

/**
 * Keys seen by the app are the inner keys without the prefix, so one bucket can hold several services
 * (or other data) side by side. List cursors are the inner store's own and pass through unchanged.
 */
export class PrefixedStore implements BlobStore {
  /** Present when the inner store has it: a prefix must not cost the group commit. */
  readonly writeMany?: (writes: readonly BlobWrite[]) => Promise<boolean[]>;

  constructor(
    readonly inner: BlobStore,
    /** Non-empty; ends with `/` when it names a folder (normalised by the caller). */
    readonly prefix: string,
  ) {
    const many = inner.writeMany?.bind(inner);
    if (many) this.writeMany = (writes) => many(writes.map((w) => ({ ...w, key: this.prefix + w.key })));
  }

  async get(key: string): Promise<BlobObject | null> {
    const o = await this.inner.get(this.prefix + key);
    return o ? { ...o, key } : null;
  }

  putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    return this.inner.putIfAbsent(this.prefix + key, body);
  }

  put(key: string, body: BlobBody): Promise<void> {
    return this.inner.put(this.prefix + key, body);
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const page = await this.inner.list({
      ...opts,
      prefix: this.prefix + (opts.prefix ?? ''),
      ...(opts.startAfter !== undefined ? { startAfter: this.prefix + opts.startAfter } : {}),
    });
    const keys = page.keys.map((k) => k.slice(this.prefix.length));
    return page.cursor === undefined ? { keys } : { keys, cursor: page.cursor };
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(this.prefix + key);
  }
}
