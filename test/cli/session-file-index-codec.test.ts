// The index's timestamp fast path: read from the digits only when the text is exactly what toISOString writes.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalIsoMs } from '../../cli/store/session-file-index-codec.js';

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
