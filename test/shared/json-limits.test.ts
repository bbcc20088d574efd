// Depth checks without recursion: exact limits, strings skipped (escapes too), and depths no recursive walk survives.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { findTooDeepText, findTooDeepValue, formatTooDeep } from '../../shared/json-limits.js';

const deepText = (n: number) => '{"k":'.repeat(n) + 'null' + '}'.repeat(n);

/** A value nested `n` objects deep, built without recursion. */
function deepValue(n: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < n; i++) v = { k: v };
  return v;
}

describe('findTooDeepText', () => {
  it('allows exactly `limit` levels and reports level limit+1 with its offset and path', () => {
    expect(findTooDeepText(deepText(64), 64)).toBeNull();
    const f = findTooDeepText(deepText(65), 64)!;
    expect(f).toMatchObject({ limit: 64, offset: 64 * 5 });
    expect(formatTooDeep(f)).toBe('k.k.k.k.k.k.k.k...');
    expect(findTooDeepText('1', 0)).toBeNull();
    expect(findTooDeepText('[]', 0)).toMatchObject({ offset: 0 });
  });

  it('skips brackets inside strings, escaped quotes and backslashes included', () => {
    const s = JSON.stringify({ a: '[[[[{{{{', b: 'say \\"[[[[\\" \\\\', c: '\\\\"' });
    expect(findTooDeepText(s, 1)).toBeNull();
    expect(findTooDeepText(JSON.stringify(['"]]]]', ['x']]), 2)).toBeNull();
    expect(findTooDeepText(JSON.stringify(['"]]]]', [['x']]]), 2)).toMatchObject({ limit: 2 });
  });

  it('names the keys on the way for messages', () => {
    const f = findTooDeepText(JSON.stringify({ meta: { header: { list: [[[[1]]]] } } }), 4)!;
    expect(formatTooDeep(f)).toBe('meta.header.list[]');
  });

  it('gives what a plain character-by-character scan gives, on any text (valid JSON or not), whatever its brackets count', () => {
    // The reference: every character looked at, escapes by the one rule (a backslash in a string takes the next character).
    const reference = (text: string, limit: number) => {
      let depth = 0;
      let inString = false;
      let key = '';
      let keyDone = true; // a ':' before any string names the level ''
      const path: string[] = [];
      for (let i = 0; i < text.length; i++) {
        const c = text[i]!;
        if (inString) {
          if (c === '\\') {
            key += c + (text[i + 1] ?? '');
            i++;
          } else if (c === '"') {
            inString = false;
            keyDone = true;
          } else key += c;
          continue;
        }
        if (c === '"') {
          inString = true;
          key = '';
          keyDone = false;
        } else if (c === ':') {
          if (depth >= 1 && depth <= 8 && keyDone) path[depth - 1] = key.slice(0, 40);
        } else if (c === '{' || c === '[') {
          if (++depth > limit) return { offset: i, path: path.slice(0, Math.min(depth - 1, 8)) };
          if (depth <= 8) path[depth - 1] = c === '[' ? '[]' : '';
        } else if (c === '}' || c === ']') depth--;
      }
      return null;
    };
    const piece = fc.constantFrom('{', '[', '}', ']', '"', '\\', ':', 'k', ',', '1', '{"a":', '["', '"]');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }).map((p) => p.join('')), fc.integer({ min: 0, max: 8 }), (text, limit) => {
        const found = findTooDeepText(text, limit);
        const want = reference(text, limit);
        expect(found === null ? null : { offset: found.offset, path: found.path }).toEqual(want);
      }),
      { numRuns: 3000 },
    );
  });

  it('scans a million levels without a stack overflow', () => {
    const n = 1_000_000;
    expect(findTooDeepText('['.repeat(n) + ']'.repeat(n), 64)).toMatchObject({ offset: 64 });
    expect(findTooDeepText('['.repeat(n) + ']'.repeat(n), n)).toBeNull();
  });
});

describe('findTooDeepValue', () => {
  it('returns null within the limit and the path to the first container past it', () => {
    expect(findTooDeepValue(deepValue(64), 64)).toBeNull();
    expect(findTooDeepValue(deepValue(65), 64)).toHaveLength(64);
    expect(findTooDeepValue({ a: [1, { b: [[2]] }] }, 3)).toEqual(['a', 1, 'b']);
    expect(findTooDeepValue('scalar', 0)).toBeNull();
  });

  it('walks 200,000 levels, which any recursive walk would not survive', () => {
    const v = deepValue(200_000);
    expect(() => JSON.stringify(v)).toThrow(RangeError);
    expect(findTooDeepValue(v, 64)).toHaveLength(64);
    expect(findTooDeepValue(v, 200_000)).toBeNull();
  });
});
