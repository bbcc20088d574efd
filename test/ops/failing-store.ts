// A mock store for crash tests: a real store underneath, and a switch that "kills" it at the Nth write (no node:*, runs in workerd too).
import { SessyncError } from '../../shared/errors.js';
import type { BlobObject, BlobStore, BlobWrite, ListOptions, ListPage } from '../../worker/store/blob-store.js';

/**
 * Wraps a real BlobStore. Armed with `failAt = n`, the n-th write (put, putIfAbsent, delete; 0-based) and every
 * write after it throw, as if the server process died there: nothing a request does after that point reaches the
 * store, even from writes already started in parallel. Reads keep working (they change nothing).
 */
export class FailingStore implements BlobStore {
  failAt: number | null = null;
  writes = 0;
  /** True once the armed failure has fired. */
  fired = false;
  /** Group commits asked of this store (writeMany calls), and the writes they held. */
  groups = 0;
  groupedWrites = 0;

  constructor(readonly inner: BlobStore) {}

  arm(n: number): void {
    this.failAt = n;
    this.writes = 0;
    this.fired = false;
  }

  disarm(): void {
    this.failAt = null;
  }

  private write(key: string): void {
    if (this.failAt === null) return;
    if (this.fired || this.writes++ >= this.failAt) {
      this.fired = true;
      throw new SessyncError('unavailable', `injected crash before writing ${key}`, { retryable: true });
    }
  }

  get(key: string): Promise<BlobObject | null> {
    return this.inner.get(key);
  }

  list(opts?: ListOptions): Promise<ListPage> {
    return this.inner.list(opts);
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    this.write(key);
    return this.inner.putIfAbsent(key, body);
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    this.write(key);
    return this.inner.put(key, body);
  }

  async delete(key: string): Promise<void> {
    this.write(key);
    return this.inner.delete(key);
  }

  /**
   * A group commit that dies at the armed write: the writes of the group before it are stored (each whole, as a
   * real store may leave any subset), the rest are not, and the call throws. Without an inner writeMany the
   * writes go one by one, so the group path is exercised over every backend.
   */
  async writeMany(writes: readonly BlobWrite[]): Promise<boolean[]> {
    this.groups++;
    this.groupedWrites += writes.length;
    let allowed = writes.length;
    let crash: unknown = null;
    for (let i = 0; i < writes.length; i++) {
      try {
        this.write(writes[i]!.key);
      } catch (e) {
        allowed = i;
        crash = e;
        break;
      }
    }
    const landed = writes.slice(0, allowed);
    const created = this.inner.writeMany
      ? await this.inner.writeMany(landed)
      : await Promise.all(landed.map((w) => (w.replace ? this.inner.put(w.key, w.body).then(() => true) : this.inner.putIfAbsent(w.key, w.body))));
    if (crash !== null) throw crash;
    return created;
  }
}
