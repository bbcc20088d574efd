// In-memory BlobStore for unit tests and throwaway servers; same semantics as every other backend.
import type { BlobObject, BlobStore, ListOptions, ListPage } from './blob-store.js';
import { compareKeys } from './key-order.js';

const MAX_PAGE = 1000;

async function etagOf(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body as Uint8Array<ArrayBuffer>));
  return Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, '0')).join('');
}

export class MemoryStore implements BlobStore {
  private readonly objects = new Map<string, BlobObject>();

  async get(key: string): Promise<BlobObject | null> {
    const o = this.objects.get(key);
    return o ? { key, body: o.body.slice(), etag: o.etag } : null;
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    const etag = await etagOf(body);
    // The check and the set run in one synchronous step, so racing callers cannot both win.
    if (this.objects.has(key)) return false;
    this.objects.set(key, { key, body: body.slice(), etag });
    return true;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    this.objects.set(key, { key, body: body.slice(), etag: await etagOf(body) });
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
