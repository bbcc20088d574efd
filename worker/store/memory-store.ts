// In-memory BlobStore for unit tests and throwaway servers; same semantics as every other backend.
import { joinBody, type BlobBody, type BlobObject, type BlobStore, type ListOptions, type ListPage } from './blob-store.js';
import { compareKeys } from './key-order.js';

const MAX_PAGE = 1000;

async function etagOf(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body as Uint8Array<ArrayBuffer>));
  return Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A stored object; its etag is hashed on the first read that needs it, not on every write (most are never read back). */
interface Held {
  body: Uint8Array;
  etag?: Promise<string>;
}

/** A copy the caller cannot change afterwards: parts are joined into a new buffer, which is that copy already. */
function own(body: BlobBody): Uint8Array {
  return Array.isArray(body) && body.length > 1 ? joinBody(body) : joinBody(body).slice();
}

export class MemoryStore implements BlobStore {
  private readonly objects = new Map<string, Held>();

  async get(key: string): Promise<BlobObject | null> {
    const o = this.objects.get(key);
    if (!o) return null;
    o.etag ??= etagOf(o.body);
    return { key, body: o.body.slice(), etag: await o.etag };
  }

  async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    // The check and the set run in one synchronous step, so racing callers cannot both win.
    if (this.objects.has(key)) return false;
    this.objects.set(key, { body: own(body) });
    return true;
  }

  async put(key: string, body: BlobBody): Promise<void> {
    this.objects.set(key, { body: own(body) });
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
