// Pulled entries written parents first across pages: an entry whose parent is not in the file yet waits for it.
import type { IncomingEntry } from '../../shared/merge.js';

/** An entry that came before its parent, and the seq of the batch it came in (the cursor must not pass it). */
interface Waiting {
  x: IncomingEntry;
  seq: number;
}

/**
 * The server serves a session's batches host by host, each host's in seq order, a page at a time; an entry of one
 * host's batch may have its parent in another host's batch on a later page (each host continued the other's branch).
 * pi builds its tree in file order, so such an entry waits here until its parent is written, and its host is left out
 * of the next requests (the cursor sent says it is done) while it waits, so that the other hosts' batches, which hold
 * the parent, come first. Batches are pushed whole and an entry can only name a parent its writer had, so some host's
 * next batch can always be written: the entries waiting are at most one page per host (a host waits, and is not
 * asked for more, from the page that brought them). Entries whose parent never comes (a damaged batch, a file that
 * named a missing parent) break that: they are written, as roots of their own as before, once no other host that
 * could bring the parent is unread (unreachable). Until then the entries under them wait, and when every host left
 * unread waits (two hosts' chains hang from such a one), the pull asks those hosts on, holding more than a page.
 */
export class ParentWait {
  private waiting: Waiting[] = [];

  get size(): number {
    return this.waiting.length;
  }

  /** Hosts with an entry waiting: the next request skips them. */
  hosts(): Set<string> {
    return new Set(this.waiting.map((w) => w.x.host ?? ''));
  }

  /** Per host, the lowest seq of a batch with an entry waiting: the cursor saved for that host stays below it. */
  lowestSeqs(): Map<string, number> {
    const out = new Map<string, number>();
    for (const { x, seq } of this.waiting) {
      const h = x.host ?? '';
      const low = out.get(h);
      if (low === undefined || seq < low) out.set(h, seq);
    }
    return out;
  }

  /**
   * Of the entries waiting and the page's (`seqs[i]` the seq of `page[i]`'s batch), those that can be written now, in
   * the order they came: a root, one whose parent `written` holds, and one whose parent is among these. The rest wait.
   */
  ready(page: readonly IncomingEntry[], seqs: readonly number[], written: (id: string) => boolean): IncomingEntry[] {
    const all: Waiting[] = [...this.waiting];
    for (const [i, x] of page.entries()) all.push({ x, seq: seqs[i]! });
    return this.take(all, ({ entry: e }) => e.parentId === null || e.parentId === undefined || e.parentId === e.id || written(e.parentId));
  }

  /**
   * The entries waiting whose parent no request can bring, taken out in the order they came, once the server has
   * nothing more for the hosts asked: `unread` are the hosts that may still have batches not read (skipped ones whose
   * end was never reached). A waiting entry whose parent is not waiting either came in host h's batch; its parent was
   * pushed before it, so by h in a batch read already (the parent would be here) or by another host: with no other
   * host unread, the parent never comes, and the entry is written as a root of its own (as a pull always did with a
   * missing parent), with every entry waiting under it. The rest wait for the unread hosts. With none, all go.
   */
  unreachable(unread: ReadonlySet<string>): IncomingEntry[] {
    const ids = new Set(this.waiting.map((w) => w.x.entry.id));
    const lost = ({ entry, host }: IncomingEntry) => unread.size === 0 || (unread.size === 1 && unread.has(host ?? '') && !ids.has(entry.parentId!));
    return this.take([...this.waiting], lost);
  }

  /** Of `all`, those `free` lets go and every one under them, returned in order; the others wait. */
  private take(all: Waiting[], free: (x: IncomingEntry) => boolean): IncomingEntry[] {
    const ok: boolean[] = all.map(() => false);
    const byParent = new Map<string, number[]>();
    const queue: number[] = [];
    for (const [i, { x }] of all.entries()) {
      if (free(x)) {
        ok[i] = true;
        queue.push(i);
      } else {
        const p = x.entry.parentId!;
        const list = byParent.get(p);
        if (list) list.push(i);
        else byParent.set(p, [i]);
      }
    }
    // Breadth-first from what can be written: sessions are thousands deep, so no recursion.
    for (let k = 0; k < queue.length; k++) {
      const id = all[queue[k]!]!.x.entry.id;
      const kids = byParent.get(id);
      if (!kids) continue;
      byParent.delete(id);
      for (const j of kids) {
        if (ok[j]) continue;
        ok[j] = true;
        queue.push(j);
      }
    }
    const out: IncomingEntry[] = [];
    this.waiting = [];
    for (const [i, w] of all.entries()) {
      if (ok[i]) out.push(w.x);
      else this.waiting.push(w);
    }
    return out;
  }
}
