// Gathers the batches that several sessions' pushes are ready to send into one POST /v1/batches (older servers: one each).
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { LIMITS, type PushBatchItem, type PushBatchResponse, type PushBatchesItem } from '../../shared/wire.js';
import { serverError, type ApiClient } from '../api-client.js';
import { Coalescer, REQUEST_BYTES, type Waiting } from './coalescer.js';
import { frameBytes, toFrame, toJsonRequest } from './push-wire.js';

interface Item {
  req: PushBatchItem;
}

/**
 * Each session's push runs as before (its own state, seqs, retries and conflict handling) and calls `push` where
 * it would call `api.pushBatch`; the batches of sessions pushed at once share POST /v1/batches requests, so N
 * sessions cost about N / target requests, not N. The answer of each item is exactly what the single route would
 * have answered; a retryable failure of one item is retried alone.
 */
export class PushBatcher extends Coalescer<Item, PushBatchResponse> {
  /** null: not known yet; false: the server predates POST /v1/batches. */
  private multi: boolean | null = null;
  /** Requests sent through the multi-session route, and the batches they carried (for benches and tests). */
  requests = 0;
  batches = 0;

  /** `target`: batches per request when pushes keep coming (fewer than the pushes running, so requests overlap). */
  constructor(private readonly api: ApiClient, target: number = LIMITS.maxBatchesPerPush) {
    super(target, REQUEST_BYTES, LIMITS.maxBatchesPerPush);
  }

  push(req: PushBatchItem): Promise<PushBatchResponse> {
    if (this.multi === false) return this.api.pushBatch(req);
    // A sealed body still in base64 (from an older sessync) is checked now: refused, it fails its own push, not the request.
    if (typeof req.body === 'string' && req.envelope.encoding === 'aes-256-gcm') {
      try {
        toFrame(req);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    // What the item adds to the request: its frame (raw body), or its JSON for a server that takes no frames.
    const bytes = this.api.takesFrames === false ? Buffer.byteLength(JSON.stringify(toJsonRequest(req))) : frameBytes(req);
    // A batch that fills a request alone goes by the single route, which takes the same body limit.
    if (bytes > REQUEST_BYTES) return this.api.pushBatch(req);
    return this.enqueue({ req }, bytes);
  }

  protected async deliver(group: Waiting<Item, PushBatchResponse>[]): Promise<void> {
    let results: PushBatchesItem[];
    try {
      this.requests++;
      this.batches += group.length;
      results = (await this.api.pushBatches(group.map((w) => w.req.req))).results;
      this.multi = true;
      if (results.length !== group.length) throw new SessyncError('wrong_server', `the server answered ${results.length} results for ${group.length} batches`);
    } catch (e) {
      if (this.multi !== true && isSessyncError(e, 'not_found')) {
        // A server from before POST /v1/batches (also for requests sent before the first answer said so): every
        // batch by the single route, as before.
        this.multi = false;
        return this.single(group);
      }
      const cap = (isSessyncError(e, 'too_large') ? (e.details as { server?: { maxBatches?: unknown } } | undefined)?.server?.maxBatches : undefined);
      if (typeof cap === 'number' && Number.isInteger(cap) && cap >= 1 && cap < group.length) {
        this.cap = cap;
        for (let i = 0; i < group.length; i += cap) await this.deliver(group.slice(i, i + cap));
        return;
      }
      if (isSessyncError(e, 'too_large') && cap === undefined && group.length > 1) {
        // The whole body over the limit: a group sized for frames sent as JSON to a server that takes none (base64
        // and escapes make it larger). Nothing was stored; each half goes again.
        const half = Math.ceil(group.length / 2);
        await this.deliver(group.slice(0, half));
        await this.deliver(group.slice(half));
        return;
      }
      for (const w of group) w.reject(e);
      return;
    }
    await Promise.all(group.map(async (w, i) => {
      const r = results[i]!;
      if (r.ok) {
        const { ok: _, ...res } = r;
        w.resolve(res);
      } else if (r.error.retryable === true) {
        // A storage hiccup for this batch alone: the single route's retries (same batch, so idempotent) take it.
        await this.api.pushBatch(w.req.req).then(w.resolve, w.reject);
      } else {
        // As the single route's answer would have been thrown (its HTTP status is not known for one item: 200).
        w.reject(serverError(r.error, 200, r.error.details));
      }
    }));
  }

  private async single(group: Waiting<Item, PushBatchResponse>[]): Promise<void> {
    await Promise.all(group.map((w) => this.api.pushBatch(w.req.req).then(w.resolve, w.reject)));
  }
}
