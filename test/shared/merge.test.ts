// Table tests for the union-by-id merge: duplicates skipped, conflicts set aside and reported, parents before children.
import { describe, expect, it } from 'vitest';
import { canonicalJson, mergeEntries, parentsFirst } from '../../shared/merge.js';
import type { SessionEntry } from '../../shared/entry.js';
import { SessionTree } from '../../shared/tree.js';

const e = (id: string, parentId: string | null, text = id, ts = '2026-01-01T00:00:00.000Z'): SessionEntry => ({
  type: 'message', id, parentId, timestamp: ts, message: { role: 'user', content: text },
});
const local = (...entries: SessionEntry[]) => new Map(entries.map((x) => [x.id, x] as [string, SessionEntry]));
const inc = (...entries: SessionEntry[]) => entries.map((entry) => ({ entry, host: 'h2' }));

describe('mergeEntries', () => {
  const cases: { name: string; local: SessionEntry[]; incoming: SessionEntry[]; append: string[]; dup: number; conflicts: string[] }[] = [
    { name: 'nothing incoming', local: [e('a', null)], incoming: [], append: [], dup: 0, conflicts: [] },
    { name: 'all new, linear', local: [e('a', null)], incoming: [e('b', 'a'), e('c', 'b')], append: ['b', 'c'], dup: 0, conflicts: [] },
    { name: 'already present, same content', local: [e('a', null), e('b', 'a')], incoming: [e('b', 'a')], append: [], dup: 1, conflicts: [] },
    { name: 'same id different content is a conflict', local: [e('a', null), e('b', 'a', 'mine')], incoming: [e('b', 'a', 'theirs')], append: [], dup: 0, conflicts: ['b'] },
    { name: 'incoming twice, same content', local: [], incoming: [e('a', null), e('a', null)], append: ['a'], dup: 1, conflicts: [] },
    { name: 'incoming twice, different content', local: [], incoming: [e('a', null, 'x'), e('a', null, 'y')], append: ['a'], dup: 0, conflicts: ['a'] },
    { name: 'children before parents are reordered', local: [e('r', null)], incoming: [e('c', 'b'), e('b', 'a'), e('a', 'r')], append: ['a', 'b', 'c'], dup: 0, conflicts: [] },
    { name: 'branch from a local entry', local: [e('r', null), e('x', 'r')], incoming: [e('y', 'r'), e('z', 'y')], append: ['y', 'z'], dup: 0, conflicts: [] },
    { name: 'dangling parent kept', local: [], incoming: [e('q', 'missing')], append: ['q'], dup: 0, conflicts: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = mergeEntries(local(...c.local), inc(...c.incoming));
      expect(r.toAppend.map((x) => x.id)).toEqual(c.append);
      expect(r.duplicates).toBe(c.dup);
      expect(r.conflicts.map((x) => x.id)).toEqual(c.conflicts);
    });
  }

  it('a conflict keeps both versions and names the host', () => {
    const mine = e('b', 'a', 'mine');
    const theirs = e('b', 'a', 'theirs');
    const r = mergeEntries(local(e('a', null), mine), inc(theirs));
    expect(r.conflicts).toEqual([{ id: 'b', kept: mine, aside: theirs, host: 'h2' }]);
  });

  it('key order does not make a conflict; canonical JSON string in the map works too', () => {
    const a = e('a', null);
    const reordered = JSON.parse(JSON.stringify({ timestamp: a.timestamp, message: a.message, parentId: null, id: 'a', type: 'message' })) as SessionEntry;
    expect(canonicalJson(a)).toBe(canonicalJson(reordered));
    const r = mergeEntries(new Map([['a', canonicalJson(a)]]), inc(reordered));
    expect(r).toMatchObject({ toAppend: [], duplicates: 1, conflicts: [] });
  });
});

describe('parentsFirst', () => {
  it('keeps a valid order unchanged', () => {
    const xs = [e('a', null), e('b', 'a'), e('c', 'b'), e('d', 'a')];
    expect(parentsFirst(xs).map((x) => x.id)).toEqual(['a', 'b', 'c', 'd']);
  });
  it('survives a cycle and a 20,000-deep chain', () => {
    expect(parentsFirst([e('a', 'b'), e('b', 'a')]).map((x) => x.id).sort()).toEqual(['a', 'b']);
    const chain: SessionEntry[] = [];
    for (let i = 0; i < 20_000; i++) chain.push(e(`n${i}`, i ? `n${i - 1}` : null));
    const out = parentsFirst(chain.slice().reverse());
    const pos = new Map(out.map((x, i) => [x.id, i]));
    expect(out).toHaveLength(20_000);
    for (const x of chain) if (x.parentId) expect(pos.get(x.parentId)!).toBeLessThan(pos.get(x.id)!);
  });
});

describe('leaf last', () => {
  it('puts the newest tip and its path at the end, parents still first', () => {
    const t = (n: number) => `2026-01-01T00:00:0${n}.000Z`;
    // Two branches from r: a1 -> a2 (newest, ts 5) and b1 -> b2 (ts 4), given newest branch first.
    const xs = [e('a1', 'r', 'a1', t(1)), e('a2', 'a1', 'a2', t(5)), e('b1', 'r', 'b1', t(2)), e('b2', 'b1', 'b2', t(4))];
    const out = parentsFirst(xs, { leafLast: true }).map((x) => x.id);
    expect(out.at(-1)).toBe('a2');
    expect(out.indexOf('a1')).toBeLessThan(out.indexOf('a2'));
    expect(out.indexOf('b1')).toBeLessThan(out.indexOf('b2'));
    // A side branch hanging off the leaf path comes before the path continues.
    const ys = [e('p', null, 'p', t(1)), e('q', 'p', 'q', t(6)), e('side', 'p', 'side', t(3))];
    expect(parentsFirst(ys, { leafLast: true }).map((x) => x.id)).toEqual(['p', 'side', 'q']);
    expect(mergeEntries(new Map(), inc(...xs)).toAppend.at(-1)!.id).toBe('a2');
  });
});

describe('leaf last: the newest tip as the leaf rule reads times (parsed, not compared as strings)', () => {
  // Two tips from r: x and y. Timestamps in the formats writers use (Z or an offset, with or without milliseconds).
  const cases: { name: string; x: string; y: string; leaf: 'x' | 'y' }[] = [
    { name: 'same format, later wins', x: '2026-01-01T00:00:01.000Z', y: '2026-01-01T00:00:02.000Z', leaf: 'y' },
    { name: 'no milliseconds against milliseconds later in the same second', x: '2026-01-01T00:00:00Z', y: '2026-01-01T00:00:00.500+00:00', leaf: 'y' },
    { name: 'milliseconds against a later whole second', x: '2026-01-01T00:00:00.900+00:00', y: '2026-01-01T00:00:01Z', leaf: 'y' },
    { name: 'an offset whose text sorts later but is earlier', x: '2026-01-01T00:30:00Z', y: '2026-01-01T01:00:00+01:00', leaf: 'x' },
    { name: 'the same instant written two ways: the greater text, as the leaf rule ties', x: '2026-01-01T00:00:00Z', y: '2026-01-01T00:00:00.000+00:00', leaf: 'x' },
    { name: 'the same text: the greater id', x: '2026-01-01T00:00:00Z', y: '2026-01-01T00:00:00Z', leaf: 'y' },
    { name: 'an unreadable time is older than any', x: 'not a time', y: '2026-01-01T00:00:00Z', leaf: 'y' },
  ];
  for (const c of cases) {
    for (const order of [['x', 'y'], ['y', 'x']] as const) {
      it(`${c.name} (${order.join(' then ')})`, () => {
        const byId = { x: e('x', 'r', 'x', c.x), y: e('y', 'r', 'y', c.y) };
        const xs = [e('r', null, 'r', '2025-12-31T00:00:00Z'), ...order.map((k) => byId[k])];
        // Seen failing on old code for the mixed formats: the tip with the greater text was put last.
        expect(parentsFirst(xs, { leafLast: true }).at(-1)!.id).toBe(c.leaf);
        expect(SessionTree.from(xs).leafId).toBe(c.leaf); // the leaf rule itself: the two agree
        expect(mergeEntries(local(xs[0]!), inc(...xs.slice(1))).toAppend.at(-1)!.id).toBe(c.leaf);
      });
    }
  }
});
