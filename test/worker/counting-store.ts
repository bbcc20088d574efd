// A real store underneath that logs each call the app makes (a wrapper, not a mock: every call reaches the store).
import type { BlobObject, BlobStore, ListOptions, ListPage } from '../../worker/store/blob-store.js';

export class CountingStore implements BlobStore {
  calls: string[] = [];
  constructor(private readonly inner: BlobStore) {}
  get(key: string): Promise<BlobObject | null> {
    this.calls.push(`get ${key}`);
    return this.inner.get(key);
  }
  list(opts?: ListOptions): Promise<ListPage> {
    this.calls.push(`list ${opts?.prefix ?? ''}`);
    return this.inner.list(opts);
  }
  putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    this.calls.push(`putIfAbsent ${key}`);
    return this.inner.putIfAbsent(key, body);
  }
  put(key: string, body: Uint8Array): Promise<void> {
    this.calls.push(`put ${key}`);
    return this.inner.put(key, body);
  }
  delete(key: string): Promise<void> {
    this.calls.push(`delete ${key}`);
    return this.inner.delete(key);
  }
}

/** Workers free plan: storage calls (subrequests) per request. */
export const WORKERS_CALLS = 50;
