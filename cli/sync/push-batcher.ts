// Gathers the batches that several sessions' pushes are ready to send into one POST /v1/batches (older servers: one each).
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { LIMITS, type PushBatchRequest, type PushBatchResponse, type PushBatchesItem } from '../../shared/wire.js';
import { serverError, type ApiClient } from '../api-client.js';

/** Room for the request's own JSON around the items. */
const REQUEST_SLACK = 64 * 1024;

interface Waiting {
  req: PushBatchRequest;
  json: string;
  bytes: number;
  resolve: (r: PushBatchResponse) => void;
  reject: (e: unknown) => void;
}

/**
 * Each session's push runs as before (its own state, seqs, retries and conflict handling) and calls `push` where
 * it would call `api.pushBatch`. A request goes out when every running push waits on one (or the body limit or
 * the server's cap is reached), so N sessions cost about N / workers requests, not N. The answer of each item is
 * exactly what the single route would have answered; a retryable failure of one item is retried alone.
 */
export class PushBatcher {
  private running = 0;
  private queue: Waiting[] = [];
  private inFlight = 0;
  /** Batches per request; lowered to the server's cap when it names one. */
  private cap: number = LIMITS.maxBatchesPerPush;
  /** null: not known yet; false: the server predates POST /v1/batches. */
  private multi: boolean | null = null;
  /** Requests sent through the multi-session route, and the batches they carried (for benches and tests). */
  requests = 0;
  batches = 0;

  /** `target`: batches per request when pushes keep coming (fewer than the pushes running, so requests overlap). */
  constructor(private readonly api: ApiClient, private readonly target: number = LIMITS.maxBatchesPerPush) {}

  /** Runs one session's push; while it runs, the batcher waits for it before sending a partly filled request. */
  async around<T>(fn: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.maybeSend();
    }
  }

  push(req: PushBatchRequest): Promise<PushBatchResponse> {
    if (this.multi === false) return this.api.pushBatch(req);
    const json = JSON.stringify(req);
    const bytes = Buffer.byteLength(json);
    // A batch that fills a request alone goes by the single route, which takes the same body limit.
    if (bytes + REQUEST_SLACK > LIMITS.maxRequestBytes) return this.api.pushBatch(req);
    return new Promise<PushBatchResponse>((resolve, reject) => {
      if (this.queuedBytes() + bytes + REQUEST_SLACK > LIMITS.maxRequestBytes) this.send(this.queue.length);
      this.queue.push({ req, json, bytes, resolve, reject });
      this.maybeSend();
    });
  }

  private queuedBytes(): number {
    let n = 0;
    for (const w of this.queue) n += w.bytes + 1;
    return n;
  }

  /**
   * Sends a full request (the cap, or `target` batches, whichever is lower) at once, so the next one fills while
   * the server works on it; and a partly filled one when every running push is waiting on an answer.
   */
  private maybeSend(): void {
    const full = Math.min(this.cap, this.target);
    while (this.queue.length >= full) this.send(full);
    if (this.queue.length > 0 && this.queue.length + this.inFlight >= this.running) this.send(this.queue.length);
  }

  private send(n: number): void {
    if (n === 0) return;
    const group = this.queue.splice(0, n);
    this.inFlight += group.length;
    void this.deliver(group).finally(() => {
      this.inFlight -= group.length;
      this.maybeSend();
    });
  }

  private async deliver(group: Waiting[]): Promise<void> {
    let results: PushBatchesItem[];
    try {
      this.requests++;
      this.batches += group.length;
      results = (await this.api.pushBatchesJson(group.map((w) => w.json))).results;
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
        await this.api.pushBatch(w.req).then(w.resolve, w.reject);
      } else {
        // As the single route's answer would have been thrown (its HTTP status is not known for one item: 200).
        w.reject(serverError(r.error, 200, r.error.details));
      }
    }));
  }

  private async single(group: Waiting[]): Promise<void> {
    await Promise.all(group.map((w) => this.api.pushBatch(w.req).then(w.resolve, w.reject)));
  }
}
