// ParentWait: which pulled entries can be written now, which wait for a parent, and what the saved cursor must stay below.
import { describe, expect, it } from 'vitest';
import type { IncomingEntry } from '../../shared/merge.js';
import type { SessionEntry } from '../../shared/entry.js';
import { ParentWait } from '../../cli/sync/pull-order.js';

function inc(id: string, parentId: string | null, host: string): IncomingEntry {
  const entry = { type: 'message', id, parentId, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: id } } as SessionEntry;
  return { entry, host, text: JSON.stringify(entry) };
}
const ids = (xs: IncomingEntry[]) => xs.map((x) => x.entry.id);

describe('ParentWait', () => {
  it('holds an entry whose parent is not written, and its children, until a later page brings the parent', () => {
    const w = new ParentWait();
    const file = new Set(['r']);
    // Page 1: host b's batches 1-2 (the second continues a's chain that has not come yet), and a root of its own.
    const p1 = [inc('b1', 'r', 'b'), inc('b2', 'a2', 'b'), inc('b3', 'b2', 'b')];
    expect(ids(w.ready(p1, [1, 2, 3], (id) => file.has(id)))).toEqual(['b1']);
    expect([...w.hosts()]).toEqual(['b']);
    expect(w.lowestSeqs()).toEqual(new Map([['b', 2]]));
    file.add('b1');
    // Page 2: host a's chain, which the waiting entries hang from; they are written after it, in the order they came.
    const p2 = [inc('a1', 'b1', 'a'), inc('a2', 'a1', 'a')];
    expect(ids(w.ready(p2, [1, 2], (id) => file.has(id)))).toEqual(['b2', 'b3', 'a1', 'a2']);
    expect(w.size).toBe(0);
    expect(w.hosts().size).toBe(0);
  });

  it('a page whose own entries are out of order needs no wait; a missing parent waits until drained', () => {
    const w = new ParentWait();
    const page = [inc('c2', 'c1', 'c'), inc('c1', null, 'c'), inc('o1', 'gone', 'c'), inc('o2', 'o1', 'c')];
    expect(ids(w.ready(page, [5, 5, 6, 7], () => false))).toEqual(['c2', 'c1']);
    expect(w.lowestSeqs()).toEqual(new Map([['c', 6]]));
    expect(ids(w.unreachable(new Set()))).toEqual(['o1', 'o2']);
    expect(w.size).toBe(0);
  });

  it('an entry that names itself as parent, and a cycle, do not loop: the cycle waits for the drain', () => {
    const w = new ParentWait();
    const page = [inc('s', 's', 'h'), inc('x', 'y', 'h'), inc('y', 'x', 'h')];
    expect(ids(w.ready(page, [1, 1, 1], () => false))).toEqual(['s']);
    expect(ids(w.unreachable(new Set()))).toEqual(['x', 'y']);
  });

  it('once the server has nothing more for the hosts asked, lets go only what no unread host can bring', () => {
    const w = new ParentWait();
    const file = new Set(['a0']);
    // Host a's page: an entry naming a parent no one pushed, and a chain on it; host b's: a chain on a's later batch.
    const page = [inc('a1', 'ghost', 'a'), inc('a2', 'a1', 'a'), inc('b0', 'a9', 'b'), inc('b1', 'b0', 'b'), inc('b2', 'x', 'b'), inc('b3', 'b2', 'b')];
    expect(ids(w.ready(page, [2, 3, 1, 2, 3, 4], (id) => file.has(id)))).toEqual([]);
    // Both unread: either may hold the other's missing parent, so everything waits.
    expect(ids(w.unreachable(new Set(['a', 'b'])))).toEqual([]);
    // Only a unread (b read to its end): a's orphan and its chain go (a's own later batches cannot hold a parent of
    // an earlier one); b's entries wait for a's later batches.
    expect(ids(w.unreachable(new Set(['a'])))).toEqual(['a1', 'a2']);
    expect([...w.hosts()]).toEqual(['b']);
    expect(w.lowestSeqs()).toEqual(new Map([['b', 1]]));
    // a's later batch brings b0's parent; b2's never comes, and goes once no host is unread.
    expect(ids(w.ready([inc('a9', 'a2', 'a')], [9], (id) => file.has(id) || ['a1', 'a2'].includes(id)))).toEqual(['b0', 'b1', 'a9']);
    expect(ids(w.unreachable(new Set(['a'])))).toEqual([]);
    expect(ids(w.unreachable(new Set()))).toEqual(['b2', 'b3']);
    expect(w.size).toBe(0);
  });
});
