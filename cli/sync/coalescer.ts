// Gathers the calls that several sessions' syncs are ready to make into shared requests (push-batcher, pull-batcher).
import { LIMITS } from '../../shared/wire.js';

export interface Waiting<Req, Res> {
  req: Req;
  /** What the item adds to the request body. */
  bytes: number;
  resolve: (r: Res) => void;
  reject: (e: unknown) => void;
}

/**
 * Each session's sync runs as before and hands its call here. A request goes out when `target` calls are queued (so
 * the next one fills while it is answered), when the byte budget or the server's cap is reached, or when every
 * running sync is waiting on a call (none can add to the request any more). Subclasses send a group and settle it.
 */
export abstract class Coalescer<Req, Res> {
  private running = 0;
  private queue: Waiting<Req, Res>[] = [];
  private inFlight = 0;
  private requestsInFlight = 0;
  /** Calls per request; lowered to the server's cap when it names one. */
  protected cap: number;
  /**
   * Requests sent and not answered, at most (default: no limit). Full requests beyond it wait in the queue: the
   * server is not handed dozens of 10 MB requests at once when sessions' batches are large.
   */
  maxInFlight = Infinity;

  constructor(
    private readonly target: number,
    private readonly maxBytes: number,
    cap: number,
  ) {
    this.cap = cap;
  }

  /** Runs one session's sync; while it runs, a partly filled request waits for it. */
  async around<T>(fn: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.maybeSend();
    }
  }

  protected enqueue(req: Req, bytes: number): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ req, bytes, resolve, reject });
      this.maybeSend();
    });
  }

  /** Calls from the head of the queue that fit one request: at most `n`, within the byte budget (one at least). */
  private fitting(n: number): number {
    let bytes = 0;
    let k = 0;
    for (const w of this.queue) {
      if (k === n || (k > 0 && bytes + w.bytes + 1 > this.maxBytes)) break;
      bytes += w.bytes + 1;
      k++;
    }
    return k;
  }

  protected abstract deliver(group: Waiting<Req, Res>[]): Promise<void>;

  private maybeSend(): void {
    const full = Math.min(this.cap, this.target);
    while (this.requestsInFlight < this.maxInFlight && this.queue.length > 0) {
      const n = this.fitting(full);
      // Full by count or by bytes: it goes. Partly filled: only when no running sync can add to it any more.
      if (n < this.queue.length || n === full) this.send(n);
      else if (this.queue.length + this.inFlight >= this.running) this.send(n);
      else break;
    }
  }

  private send(n: number): void {
    if (n === 0) return;
    const group = this.queue.splice(0, n);
    this.inFlight += group.length;
    this.requestsInFlight++;
    void this.deliver(group)
      .catch((e: unknown) => group.forEach((w) => w.reject(e))) // settles whatever deliver left open
      .finally(() => {
        this.inFlight -= group.length;
        this.requestsInFlight--;
        this.maybeSend();
      });
  }
}

export const REQUEST_BYTES = LIMITS.maxRequestBytes - 64 * 1024;
