// The usage counter's pending batches: named before a request's writes, so a batch whose head lands unseen (a lost reply, a kill) is still counted, once.
import type { BlobStore } from './store/blob-store.js';
import { keys, parseHeadKey } from '../shared/keys.js';
import { z } from 'zod';
import { encodeJson } from './session-data.js';

/** One batch a request is about to make visible, as the counter names it until someone settles it. */
export const PendingSchema = z.object({ session: z.string(), host: z.string(), seq: z.number().int().min(1), bytes: z.number().int().min(0), request: z.string(), at: z.number() });
export type Pending = z.infer<typeof PendingSchema>;

/** The stored usage counter: bytes of the batches heads cover, and the batches named but not settled yet. */
export interface Counter {
  bytes: number;
  pending: Pending[];
}

/**
 * A pending batch whose head does not exist is dropped only after this long: before, its push may still be running
 * (its head write still to come), and dropping its entry would leave that write uncounted. No request lasts this long.
 */
export const PENDING_STALE_MS = 15 * 60_000;

/** Pending hosts (a session and a host) one request looks up to settle their entries: one list call each (PER_REQUEST_OPS). */
export const SETTLE_CHECKS_PER_REQUEST = 1;

export const batchName = (p: Pick<Pending, 'session' | 'host' | 'seq'>) => `${p.session}/${p.host}/${p.seq}`;

/** What a request does to the counter when it writes it: every step is applied only to what the stored counter still holds. */
export interface CounterChange {
  /** Batches whose head exists: counted (the bytes given) if the counter still names them, then no longer named. */
  visible: Map<string, number>;
  /** Entries to drop uncounted (their head known absent): this request's own, or stale ones. */
  drop: Pending[];
  /** Entries to add (the marker). */
  add: Pending[];
}

export const noChange = (): CounterChange => ({ visible: new Map(), drop: [], add: [] });

/**
 * The counter after `change`. Counting a batch is taking its entry out of the counter: whoever takes it out counts
 * it, and a batch no entry names any more was counted (or dropped) already, so a second settlement adds nothing.
 */
export function applyChange(c: Counter, change: CounterChange): Counter {
  let bytes = c.bytes;
  const named = new Set(c.pending.map(batchName));
  for (const [name, b] of change.visible) if (named.has(name)) bytes += b;
  const same = (a: Pending, b: Pending) => a.request === b.request && batchName(a) === batchName(b);
  const pending = c.pending.filter((p) => !change.visible.has(batchName(p)) && !change.drop.some((d) => same(d, p)));
  for (const p of change.add) if (!pending.some((q) => same(p, q))) pending.push(p);
  return { bytes: Math.max(0, bytes), pending };
}

export function encodeCounter(c: Counter): Uint8Array {
  return encodeJson(c.pending.length ? { bytes: c.bytes, pending: c.pending } : { bytes: c.bytes });
}

/**
 * Looks up the hosts of the oldest pending entries (at most SETTLE_CHECKS_PER_REQUEST, one list call each): an entry
 * its host's head covers is visible (to be counted), one not covered and stale is dropped; the rest wait.
 */
export async function settlePending(store: BlobStore, account: string, pending: readonly Pending[], now = Date.now()): Promise<CounterChange> {
  const change = noChange();
  const hosts = [...new Set([...pending].sort((a, b) => a.at - b.at).map((p) => `${p.session}/${p.host}`))].slice(0, SETTLE_CHECKS_PER_REQUEST);
  await Promise.all(
    hosts.map(async (sh) => {
      const [session, host] = sh.split('/') as [string, string];
      const page = await store.list({ prefix: keys.hostHeadsPrefix(account, session, host) });
      const top = Math.max(0, ...page.keys.map((k) => parseHeadKey(account, k)?.seq ?? 0));
      for (const p of pending) {
        if (p.session !== session || p.host !== host) continue;
        if (p.seq <= top) change.visible.set(batchName(p), p.bytes);
        else if (now - p.at > PENDING_STALE_MS) change.drop.push(p);
      }
    }),
  );
  return change;
}

/**
 * The point in one request before which no batch of it writes anything: each task of the request arrives (naming its
 * batch, or nothing) or leaves, and once all have, the counter is written once with the batches named (on the store
 * itself, not a task's group view: the group waits on its tasks, which wait here). As no task writes before it, the
 * group commit never waits on a task held here.
 */
export class RequestMark {
  private arrived: { entry: Pending | null; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private left = 0;
  private write: ((store: BlobStore, entries: Pending[]) => Promise<void>) | null = null;

  /** `store`: the request's store itself (never a group view); `tasks`: how many tasks will arrive or leave. */
  constructor(
    private readonly store: BlobStore,
    private readonly tasks: number,
  ) {}

  /** Waits until every task has arrived or left, then for the counter's write (`write`: how the first arrival writes it). */
  arrive(entry: Pending | null, write: (store: BlobStore, entries: Pending[]) => Promise<void>): Promise<void> {
    this.write ??= write;
    return new Promise((resolve, reject) => {
      this.arrived.push({ entry, resolve, reject });
      this.maybeFire();
    });
  }

  /** A task that ends without arriving (refused, failed, or of an account whose bytes are not counted). */
  leave(): void {
    this.left++;
    this.maybeFire();
  }

  private maybeFire(): void {
    if (this.arrived.length + this.left < this.tasks || this.arrived.length === 0) return;
    const group = this.arrived;
    this.arrived = [];
    const entries = group.flatMap((a) => (a.entry ? [a.entry] : []));
    const done = entries.length && this.write ? this.write(this.store, entries) : Promise.resolve();
    done.then(
      () => group.forEach((a) => a.resolve()),
      (e: unknown) => group.forEach((a) => a.reject(e)),
    );
  }
}
