// The entry tree: leaf rule, branches, children, damage (dangling parents, duplicate ids, cycles), deep chains, random trees.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { SessionEntry } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { SessionTree } from '../../shared/tree.js';
import { LogBuilder } from './log-builder.js';

const e = (id: string, parentId: string | null, timestamp = '2026-01-01T10:00:00.000Z'): SessionEntry => ({
  type: 'custom', customType: 't', id, parentId, timestamp,
});
const ids = (xs: readonly SessionEntry[]) => xs.map((x) => x.id);

describe('leaf rule', () => {
  const cases: { name: string; entries: SessionEntry[]; leaf: string | null }[] = [
    { name: 'empty', entries: [], leaf: null },
    { name: 'linear: the last', entries: [e('a', null, 't1'), e('b', 'a', 't2')], leaf: 'b' },
    {
      name: 'newest tip wins, whatever the file order',
      entries: [e('a', null, '2026-01-01T10:00:00.000Z'), e('new', 'a', '2026-01-01T10:00:09.000Z'), e('old', 'a', '2026-01-01T10:00:05.000Z')],
      leaf: 'new',
    },
    {
      name: 'equal timestamps: the greater id',
      entries: [e('a', null), e('x2', 'a'), e('x1', 'a')],
      leaf: 'x2',
    },
    {
      name: 'an inner entry is never the leaf, even when newest',
      entries: [e('a', null, '2026-01-01T10:00:09.000Z'), e('b', 'a', '2026-01-01T10:00:01.000Z')],
      leaf: 'b',
    },
    {
      name: 'timestamps compare as times, not strings',
      entries: [e('r', null, '2026-01-01T10:00:00Z'), e('p', 'r', '2026-01-01T12:00:00.000+02:00'), e('q', 'r', '2026-01-01T10:30:00.000Z')],
      leaf: 'q',
    },
  ];
  for (const c of cases) it(c.name, () => expect(SessionTree.from(c.entries).leafId).toBe(c.leaf));

  it('is the same for every order of the same entries (two machines agree)', () => {
    const b = new LogBuilder();
    b.user('a', null, 'x');
    b.user('b', 'a', 'x');
    b.user('c', 'a', 'x');
    b.user('d', 'c', 'x');
    b.user('f', 'b', 'x');
    fc.assert(fc.property(fc.shuffledSubarray(b.entries, { minLength: 5, maxLength: 5 }), (order) => {
      expect(SessionTree.from(order).leafId).toBe('f');
    }));
  });
});

describe('branch and children', () => {
  const entries = [e('r', null), e('a', 'r'), e('b', 'a'), e('c', 'a'), e('d', 'c')];
  const t = SessionTree.from(entries);
  it('branch is root to leaf', () => {
    expect(ids(t.branch('d'))).toEqual(['r', 'a', 'c', 'd']);
    expect(ids(t.branch('b'))).toEqual(['r', 'a', 'b']);
    expect(ids(t.branch('r'))).toEqual(['r']);
  });
  it('children in file order, tips, roots, parentOf', () => {
    expect(ids(t.children('a'))).toEqual(['b', 'c']);
    expect(t.children('d')).toEqual([]);
    expect(t.children('missing')).toEqual([]);
    expect(ids(t.tips())).toEqual(['b', 'd']);
    expect(ids(t.roots())).toEqual(['r']);
    expect(t.parentOf('c')?.id).toBe('a');
    expect(t.parentOf('r')).toBeNull();
    expect(t.size).toBe(5);
    expect(t.has('c') && !t.has('zz')).toBe(true);
    expect(t.get('c')).toBe(entries[3]);
  });
  it('an unknown leaf id is not_found', () => {
    expect(() => t.branch('nope')).toThrow(SessyncError);
    try {
      t.branch('nope');
    } catch (err) {
      expect((err as SessyncError).code).toBe('not_found');
    }
  });
});

describe('damage is reported and hides nothing', () => {
  it('dangling parent: the entries above it stay loadable and reachable', () => {
    const t = SessionTree.from([e('a', null, 't1'), e('b', 'a', 't2'), e('x', 'lost', 't3'), e('y', 'x', 't4'), e('z', 'y', 't5')]);
    expect(t.problems).toEqual([{ entryId: 'x', reason: expect.stringMatching(/dangling parent: lost/) }]);
    expect(t.size).toBe(5);
    expect(t.leafId).toBe('z');
    expect(ids(t.branch())).toEqual(['x', 'y', 'z']);
    expect(ids(t.roots())).toEqual(['a', 'x']);
    expect(ids(t.branch('b'))).toEqual(['a', 'b']);
  });

  it('duplicate ids: the later line is used (as in pi), each repeat reported, identical or not', () => {
    const first = e('a', null);
    const t = SessionTree.from([first, e('b', 'a'), { ...first }, { ...e('b', 'a'), customType: 'other' }]);
    expect(t.size).toBe(2);
    expect(t.get('b')?.customType).toBe('other');
    expect(t.problems.map((p) => p.entryId)).toEqual(['a', 'b']);
    expect(t.problems[0]!.reason).toMatch(/repeats an earlier entry exactly/);
    expect(t.problems[1]!.reason).toMatch(/different content/);
  });

  const cycles: { name: string; entries: SessionEntry[]; cut: string; all: string[] }[] = [
    { name: 'self parent', entries: [e('a', 'a')], cut: 'a', all: ['a'] },
    { name: 'two-cycle', entries: [e('b', 'a'), e('a', 'b')], cut: 'a', all: ['b', 'a'] },
    { name: 'three-cycle with a tail and a normal tree beside it', entries: [e('r', null), e('s', 'r'), e('c1', 'c3'), e('c2', 'c1'), e('c3', 'c2'), e('tail', 'c2')], cut: 'c1', all: ['r', 's', 'c1', 'c2', 'c3', 'tail'] },
  ];
  for (const c of cycles) {
    it(`cycle (${c.name}) is cut at its smallest id and every walk ends`, () => {
      const t = SessionTree.from(c.entries);
      expect(t.problems).toEqual([{ entryId: c.cut, reason: expect.stringMatching(/parent cycle/) }]);
      for (const x of c.entries) {
        const path = t.branch(x.id);
        expect(path.at(-1)!.id).toBe(x.id);
        expect(path.length).toBeLessThanOrEqual(c.entries.length);
      }
      expect(ids(SessionTree.from(c.entries).entries)).toEqual(c.all);
      expect(t.leafId).not.toBeNull();
    });
  }
});

describe('deep chains', () => {
  it('a chain of 200,000 entries: tree, leaf, branch, children without recursion', () => {
    const n = 200_000;
    const entries: SessionEntry[] = new Array(n);
    for (let i = 0; i < n; i++) entries[i] = e(`e${i}`, i === 0 ? null : `e${i - 1}`);
    const t = SessionTree.from(entries);
    expect(t.problems).toEqual([]);
    expect(t.leafId).toBe(`e${n - 1}`);
    const path = t.branch();
    expect(path.length).toBe(n);
    expect(path[0]!.id).toBe('e0');
    expect(path[n - 1]!.id).toBe(`e${n - 1}`);
    expect(ids(t.children('e100'))).toEqual(['e101']);
    expect(t.branch('e10').length).toBe(11);
  });

  it('a 200,000-entry cycle is found and cut', () => {
    const n = 200_000;
    const entries: SessionEntry[] = new Array(n);
    for (let i = 0; i < n; i++) entries[i] = e(`e${String(i).padStart(6, '0')}`, `e${String((i + n - 1) % n).padStart(6, '0')}`);
    const t = SessionTree.from(entries);
    expect(t.problems).toHaveLength(1);
    expect(t.problems[0]!.entryId).toBe('e000000');
    expect(t.branch().length).toBe(n);
  });
});

describe('random trees (property)', () => {
  // parents[i] < i: a random tree in file order; shuffled so children may come before parents.
  const arbTree = fc
    .array(fc.nat(), { minLength: 1, maxLength: 60 })
    .chain((raw) => {
      const entries = raw.map((r, i) => e(`n${i}`, i === 0 || r % 7 === 0 ? null : `n${r % i}`, `2026-01-01T10:00:${String(raw.length > 0 ? (r % 60) : 0).padStart(2, '0')}.000Z`));
      return fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length });
    });

  it('branch(x) starts at a root, ends at x, and every parent link on it holds; leaf is a tip', () => {
    fc.assert(
      fc.property(arbTree, (entries) => {
        const t = SessionTree.from(entries);
        expect(t.problems).toEqual([]);
        expect(t.size).toBe(entries.length);
        const tips = new Set(ids(t.tips()));
        expect(tips.has(t.leafId!)).toBe(true);
        for (const x of entries) {
          const path = t.branch(x.id);
          expect(path[0]!.parentId).toBeNull();
          expect(path.at(-1)).toBe(x);
          for (let i = 1; i < path.length; i++) expect(path[i]!.parentId).toBe(path[i - 1]!.id);
          for (const c of t.children(x.id)) expect(c.parentId).toBe(x.id);
        }
        const childCount = entries.reduce((s, x) => s + t.children(x.id).length, 0);
        expect(childCount + t.roots().length).toBe(entries.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('random damage (property)', () => {
  it('any parent links at all (missing, cycles, duplicates): no throw, every walk ends at its entry, nothing lost', () => {
    const arb = fc.array(fc.tuple(fc.integer({ min: 0, max: 15 }), fc.option(fc.integer({ min: 0, max: 20 }), { nil: null })), { maxLength: 30 });
    fc.assert(
      fc.property(arb, (rows) => {
        const entries = rows.map(([id, parent]) => e(`n${id}`, parent === null ? null : `n${parent}`));
        const t = SessionTree.from(entries);
        const uniqueIds = new Set(entries.map((x) => x.id));
        expect(t.size).toBe(uniqueIds.size);
        for (const id of uniqueIds) {
          const path = t.branch(id);
          expect(path.at(-1)!.id).toBe(id);
          expect(path.length).toBeLessThanOrEqual(t.size);
          expect(new Set(path.map((x) => x.id)).size).toBe(path.length);
        }
        if (t.size > 0) expect(uniqueIds.has(t.leafId!)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
