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

/** Index of the first key in `sorted` that is >= `key` (sorted.length when none is). */
function firstAtOrAfter(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(sorted[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first key in `sorted` that is > `key`. */
function firstAfter(sorted: readonly string[], key: string): number {
  const i = firstAtOrAfter(sorted, key);
  return i < sorted.length && sorted[i] === key ? i + 1 : i;
}

export class MemoryStore implements BlobStore {
  private readonly objects = new Map<string, Held>();
  /** The keys in list order, so a listing costs a binary search and its page, not a sort of the whole store. */
  private readonly sorted: string[] = [];

  async get(key: string): Promise<BlobObject | null> {
    const o = this.objects.get(key);
    if (!o) return null;
    o.etag ??= etagOf(o.body);
    return { key, body: o.body.slice(), etag: await o.etag };
  }

  async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    // The check and the set run in one synchronous step, so racing callers cannot both win.
    if (this.objects.has(key)) return false;
    this.set(key, { body: own(body) });
    return true;
  }

  async put(key: string, body: BlobBody): Promise<void> {
    this.set(key, { body: own(body) });
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(Math.max(opts.limit ?? MAX_PAGE, 1), MAX_PAGE);
    const prefix = opts.prefix ?? '';
    const after = opts.cursor ?? opts.startAfter ?? '';
    // The first key past both the cursor and the start of the prefix; the keys under the prefix follow it in a row.
    let i = firstAfter(this.sorted, after);
    if (compareKeys(prefix, after) > 0) i = Math.max(i, firstAtOrAfter(this.sorted, prefix));
    const keys: string[] = [];
    for (; i < this.sorted.length && keys.length <= limit; i++) {
      const k = this.sorted[i]!;
      if (!k.startsWith(prefix)) break;
      keys.push(k);
    }
    if (keys.length <= limit) return { keys };
    keys.length = limit;
    return { keys, cursor: keys[limit - 1]! };
  }

  async delete(key: string): Promise<void> {
    if (!this.objects.delete(key)) return;
    this.sorted.splice(firstAtOrAfter(this.sorted, key), 1);
  }

  /** Stores `held` under `key`, keeping `sorted` (every key, in list order) in step. */
  private set(key: string, held: Held): void {
    if (!this.objects.has(key)) this.sorted.splice(firstAtOrAfter(this.sorted, key), 0, key);
    this.objects.set(key, held);
  }
}
