// The index's fast paths: timestamps read from the digits only when the text is exactly what toISOString writes; repeated ids found from the hash column.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalIsoMs, EntryColumns, hashId, NO_PARENT } from '../../cli/store/session-file-index-codec.js';

/** What the index stored before the fast path: the time, when the text is the canonical form of it. */
function slow(t: string): number {
  const ms = Date.parse(t);
  return Number.isFinite(ms) && new Date(ms).toISOString() === t ? ms : NaN;
}

describe('canonicalIsoMs', () => {
  it('gives the time of every canonical timestamp of years 1000-9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (ms) => {
        expect(canonicalIsoMs(new Date(ms).toISOString())).toBe(ms);
      }),
      { numRuns: 5000 },
    );
  });

  it('is NaN, or agrees with Date.parse and toISOString, for a timestamp with any one character changed', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 0, 1) }), fc.nat(23), fc.integer({ min: 32, max: 126 }), (ms, at, code) => {
        const t = new Date(ms).toISOString();
        const m = t.slice(0, at) + String.fromCharCode(code) + t.slice(at + 1);
        const fast = canonicalIsoMs(m);
        if (!Number.isNaN(fast)) expect(fast).toBe(slow(m));
      }),
      { numRuns: 5000 },
    );
  });

  it('rejects days that do not exist and leaves other forms to Date.parse', () => {
    for (const t of ['2023-02-29T00:00:00.000Z', '1900-02-29T00:00:00.000Z', '2024-04-31T00:00:00.000Z', '2024-13-01T00:00:00.000Z', '2024-01-01T24:00:00.000Z', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00.000+00:00', '0999-01-01T00:00:00.000Z']) {
      expect(canonicalIsoMs(t), t).toBeNaN();
    }
    expect(canonicalIsoMs('2024-02-29T23:59:59.999Z')).toBe(slow('2024-02-29T23:59:59.999Z'));
    expect(canonicalIsoMs('2000-02-29T00:00:00.000Z')).toBe(slow('2000-02-29T00:00:00.000Z'));
  });
});

/** `k` pairs of distinct ids with one hash each (chance collisions of the 32-bit hash, found by trying). */
function collidingPairs(k: number): [string, string][] {
  const first = new Map<number, string>();
  const out: [string, string][] = [];
  for (let i = 0; out.length < k; i++) {
    const id = `c${i}`;
    const h = hashId(id);
    const other = first.get(h);
    if (other === undefined) first.set(h, id);
    else out.push([other, id]);
  }
  return out;
}

describe('EntryColumns.firstRepeat', () => {
  const pairs = collidingPairs(40);
  const columnsOf = (ids: string[]) => {
    const c = new EntryColumns();
    c.deferRepeats = true;
    ids.forEach((id, i) => c.pushNew(id, NO_PARENT, null, '2026-01-01T00:00:00.000Z', 0, i + 2, i * 10, 9, hashId(id)));
    return c;
  };
  const naive = (ids: string[]) => ids.findIndex((id, j) => ids.indexOf(id) < j);

  it('finds the first id an earlier entry has, with few or many hashes that repeat by chance', () => {
    // Up to 16 repeated hashes are looked for one at a time, more in one pass over the column: both ways here.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.nat(200), { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 3 }), (npairs, fillers, dupAt) => {
        const ids: string[] = fillers.map((f) => `f${f}`);
        for (const [a, b] of pairs.slice(0, npairs)) ids.push(a, b);
        // Shuffle deterministically from the fillers, then maybe repeat some earlier ids.
        for (let i = ids.length - 1; i > 0; i--) {
          const j = ((fillers[i % Math.max(1, fillers.length)] ?? 0) * 31 + i) % (i + 1);
          [ids[i], ids[j]] = [ids[j]!, ids[i]!];
        }
        for (const d of dupAt) ids.push(ids[d % ids.length]!);
        expect(columnsOf(ids).firstRepeat()).toBe(naive(ids));
      }),
      { numRuns: 300 },
    );
  });

  it('does not take two ids with one hash for a repeat', () => {
    const ids = pairs.slice(0, 3).flat();
    expect(columnsOf(ids).firstRepeat()).toBe(-1);
    expect(columnsOf([...ids, pairs[1]![1]]).firstRepeat()).toBe(ids.length);
  });
});
