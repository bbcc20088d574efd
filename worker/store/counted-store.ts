// A BlobStore that counts the calls made through it, for code that must keep a request inside the Workers subrequest limit.
import type { BlobBody, BlobObject, BlobStore, ListOptions, ListPage } from './blob-store.js';

/**
 * Every call is passed on to the inner store and counted in `ops`: a step that budgets its calls spends what it
 * really made, not an estimate. No writeMany: each write counts as one call, as it costs one on an object store.
 */
export class CountedStore implements BlobStore {
  ops = 0;

  constructor(readonly inner: BlobStore) {}

  get(key: string): Promise<BlobObject | null> {
    this.ops++;
    return this.inner.get(key);
  }

  putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    this.ops++;
    return this.inner.putIfAbsent(key, body);
  }

  put(key: string, body: BlobBody): Promise<void> {
    this.ops++;
    return this.inner.put(key, body);
  }

  list(opts?: ListOptions): Promise<ListPage> {
    this.ops++;
    return this.inner.list(opts);
  }

  delete(key: string): Promise<void> {
    this.ops++;
    return this.inner.delete(key);
  }
}
