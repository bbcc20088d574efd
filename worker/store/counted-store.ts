// A BlobStore that counts the calls made through it, for code that must keep a request inside the Workers subrequest limit.
import type { BlobBody, BlobObject, BlobStore, ListOptions, ListPage } from './blob-store.js';

/**
 * Subrequests one Workers request may make on the free plan: every store call is one. The per-request budgets
 * (SHARES_PAGE_EXTRA_OPS, DELETE_STEP_OPS, the batches per push and the pull page) are kept inside it.
 */
export const WORKERS_SUBREQUESTS = 50;

/** The store calls, as `count` is told of them. */
export type StoreCall = 'get' | 'putIfAbsent' | 'put' | 'list' | 'delete';

/**
 * Every call is passed on to the inner store and counted in `ops`: a step that budgets its calls spends what it
 * really made, not an estimate. No writeMany: each write counts as one call, as it costs one on an object store.
 */
export class CountedStore implements BlobStore {
  ops = 0;

  constructor(readonly inner: BlobStore) {}

  /** Told of each call before it is passed on: its kind, and its key (a list's prefix, '' for none). */
  protected count(_call: StoreCall, _key: string): void {
    this.ops++;
  }

  get(key: string): Promise<BlobObject | null> {
    this.count('get', key);
    return this.inner.get(key);
  }

  putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    this.count('putIfAbsent', key);
    return this.inner.putIfAbsent(key, body);
  }

  put(key: string, body: BlobBody): Promise<void> {
    this.count('put', key);
    return this.inner.put(key, body);
  }

  list(opts?: ListOptions): Promise<ListPage> {
    this.count('list', opts?.prefix ?? '');
    return this.inner.list(opts);
  }

  delete(key: string): Promise<void> {
    this.count('delete', key);
    return this.inner.delete(key);
  }
}
