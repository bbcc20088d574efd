// R2 BlobStore through the Workers binding: put-if-absent is a conditional put, listing follows R2's cursor.
import { SessyncError } from '../../shared/errors.js';
import { joinBody, type BlobBody, type BlobObject, type BlobStore, type ListOptions, type ListPage } from './blob-store.js';

const MAX_PAGE = 1000;

function unavailable(op: string, key: string, e: unknown): SessyncError {
  // The binding throws plain Errors ("put: We encountered an internal error. (10001)"); none says whether
  // the write landed, so nothing is retried here and the caller decides (push compares with get).
  return new SessyncError('unavailable', `R2 ${op} ${key} failed: ${(e as Error)?.message ?? String(e)}`, { retryable: true, cause: e });
}

export class R2Store implements BlobStore {
  constructor(private readonly bucket: R2Bucket) {}

  async get(key: string): Promise<BlobObject | null> {
    let obj: R2ObjectBody | null;
    let body: ArrayBuffer;
    try {
      obj = await this.bucket.get(key);
      if (!obj) return null;
      body = await obj.arrayBuffer();
    } catch (e) {
      throw unavailable('get', key, e);
    }
    return { key, body: new Uint8Array(body), etag: obj.etag };
  }

  async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    try {
      // `If-None-Match: *` as Headers: R2 answers null instead of writing when the key exists. (Older
      // runtimes misread the equivalent `etagDoesNotMatch: '*'`; the conformance suite checks this form.)
      const put = await this.bucket.put(key, joinBody(body), { onlyIf: new Headers({ 'If-None-Match': '*' }) });
      return put !== null;
    } catch (e) {
      throw unavailable('put-if-absent', key, e);
    }
  }

  async put(key: string, body: BlobBody): Promise<void> {
    try {
      await this.bucket.put(key, joinBody(body));
    } catch (e) {
      throw unavailable('put', key, e);
    }
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? MAX_PAGE), 1), MAX_PAGE);
    let page: R2Objects;
    try {
      page = await this.bucket.list({
        limit,
        ...(opts.prefix ? { prefix: opts.prefix } : {}),
        // R2's cursor already lies past startAfter; passing both is allowed but redundant.
        ...(opts.cursor ? { cursor: opts.cursor } : opts.startAfter ? { startAfter: opts.startAfter } : {}),
      });
    } catch (e) {
      throw unavailable('list', opts.prefix ?? '', e);
    }
    const keys = page.objects.map((o) => o.key);
    // A truncated page may hold fewer than `limit` keys (R2 trims by metadata size): only `truncated` says more follow.
    return page.truncated ? { keys, cursor: page.cursor } : { keys };
  }

  async delete(key: string): Promise<void> {
    try {
      await this.bucket.delete(key);
    } catch (e) {
      throw unavailable('delete', key, e);
    }
  }
}
