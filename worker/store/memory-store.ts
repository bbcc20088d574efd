// In-memory BlobStore for unit tests and throwaway servers; same semantics as every other backend.
import type { BlobObject, BlobStore, ListOptions, ListPage } from './blob-store.js';
import { compareKeys } from './key-order.js';

const MAX_PAGE = 1000;

export class MemoryStore implements BlobStore {
  private readonly objects = new Map<string, BlobObject>();
  /**
   * Each write's own etag: a new one per write, so it changes whenever the content can have. (A hash of the body
   * cost as much CPU as the server's whole handling of a 1 MB ciphertext push, and R2 or S3 compute theirs off it.)
   */
  #writes = 0;

  private etag(): string {
    return `m${++this.#writes}`;
  }

  async get(key: string): Promise<BlobObject | null> {
    const o = this.objects.get(key);
    return o ? { key, body: o.body.slice(), etag: o.etag } : null;
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    await null; // async like every backend: a caller never sees its write before it yields
    // The check and the set run in one synchronous step, so racing callers cannot both win.
    if (this.objects.has(key)) return false;
    this.objects.set(key, { key, body: body.slice(), etag: this.etag() });
    return true;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    await null;
    this.objects.set(key, { key, body: body.slice(), etag: this.etag() });
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(Math.max(opts.limit ?? MAX_PAGE, 1), MAX_PAGE);
    const prefix = opts.prefix ?? '';
    const after = opts.cursor ?? opts.startAfter ?? '';
    const all = [...this.objects.keys()].filter((k) => k.startsWith(prefix) && compareKeys(k, after) > 0).sort(compareKeys);
    const keys = all.slice(0, limit);
    return all.length > limit ? { keys, cursor: keys[keys.length - 1]! } : { keys };
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
}
