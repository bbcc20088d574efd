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
  /** Calls per request; lowered to the server's cap when it names one. */
  protected cap: number;

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
      let queued = 0;
      for (const w of this.queue) queued += w.bytes + 1;
      if (queued + bytes > this.maxBytes) this.send(this.queue.length);
      this.queue.push({ req, bytes, resolve, reject });
      this.maybeSend();
    });
  }

  protected abstract deliver(group: Waiting<Req, Res>[]): Promise<void>;

  private maybeSend(): void {
    const full = Math.min(this.cap, this.target);
    while (this.queue.length >= full) this.send(full);
    if (this.queue.length > 0 && this.queue.length + this.inFlight >= this.running) this.send(this.queue.length);
  }

  private send(n: number): void {
    if (n === 0) return;
    const group = this.queue.splice(0, n);
    this.inFlight += group.length;
    void this.deliver(group)
      .catch((e: unknown) => group.forEach((w) => w.reject(e))) // settles whatever deliver left open
      .finally(() => {
        this.inFlight -= group.length;
        this.maybeSend();
      });
  }
}

export const REQUEST_BYTES = LIMITS.maxRequestBytes - 64 * 1024;
