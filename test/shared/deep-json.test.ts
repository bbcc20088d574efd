// Walks of entry content at any depth: the iterative JSON writer, canonical JSON and redaction, same output as before for normal input.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { jsonStringify, toJsonText } from '../../shared/json-stringify.js';
import { parseSession, serializeLine } from '../../shared/jsonl.js';
import { canonicalJson, mergeEntries } from '../../shared/merge.js';
import { redactValue, scanValue, totalOf, type RedactionCounts, type RedactOptions } from '../../shared/redact.js';
import type { SessionEntry } from '../../shared/entry.js';

const DEEP = 100_000;

/** `{"a":{"a":...{"a":<inner>}...}}` nested `n` deep, as text (JSON.parse itself copes with any depth). */
function deepObjectText(n: number, inner: string): string {
  return '{"a":'.repeat(n) + inner + '}'.repeat(n);
}

function deepArrayText(n: number, inner: string): string {
  return '['.repeat(n) + inner + ']'.repeat(n);
}

/** The recursive canonical form used before: the reference the iterative one must match. */
function recursiveCanonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : recursiveCanonical(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${recursiveCanonical(o[k])}`).join(',')}}`;
}

describe('jsonStringify', () => {
  it('writes the same text as JSON.stringify, compact and indented (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2, 4), (v, indent) => {
        expect(jsonStringify(v, { indent })).toBe(JSON.stringify(v, null, indent));
      }),
      { numRuns: 500 },
    );
  });

  it('with sortKeys, writes what the recursive canonical form wrote (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(jsonStringify(v, { sortKeys: true })).toBe(recursiveCanonical(v));
      }),
      { numRuns: 500 },
    );
  });

  it('drops undefined and functions from objects and writes null for them in arrays, as JSON.stringify does', () => {
    const v = { a: undefined, b: () => 1, c: [undefined, () => 1, 1], d: 'x' };
    expect(jsonStringify(v)).toBe(JSON.stringify(v));
    expect(jsonStringify(undefined)).toBeUndefined();
  });

  it('keeps an own __proto__ key', () => {
    const v = JSON.parse('{"__proto__":{"x":1},"b":2}') as unknown;
    expect(jsonStringify(v)).toBe('{"__proto__":{"x":1},"b":2}');
    expect(canonicalJson(v)).toBe('{"__proto__":{"x":1},"b":2}');
  });

  it('throws a TypeError on a cycle instead of looping', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = { back: a };
    expect(() => jsonStringify(a)).toThrow(TypeError);
    // The same object twice side by side is not a cycle.
    const shared = { s: 1 };
    expect(jsonStringify([shared, shared])).toBe('[{"s":1},{"s":1}]');
  });

  it(`writes objects and arrays nested ${DEEP.toLocaleString('en')} deep, where JSON.stringify overflows the stack`, () => {
    const objText = deepObjectText(DEEP, '"end"');
    const arrText = deepArrayText(DEEP, '1');
    const obj = JSON.parse(objText) as unknown;
    const arr = JSON.parse(arrText) as unknown;
    expect(() => JSON.stringify(obj)).toThrow(RangeError);
    expect(jsonStringify(obj)).toBe(objText);
    expect(jsonStringify(arr)).toBe(arrText);
  });

  it('indents only the first indentLevels levels, so a deep value costs no quadratic padding', () => {
    const v = JSON.parse(deepObjectText(DEEP, '[1,2]')) as unknown;
    const text = jsonStringify(v, { indent: 2, indentLevels: 3 })!;
    expect(text.startsWith('{\n  "a": {\n    "a": {\n      "a": {"a":')).toBe(true);
    expect(text.length).toBeLessThan(DEEP * 6 + 100);
    expect(jsonStringify(JSON.parse(text) as unknown)).toBe(jsonStringify(v));
  });
});

describe('toJsonText and serializeLine', () => {
  it(`write what JSON.stringify writes, and keep going at ${DEEP.toLocaleString('en')} deep where it gives up`, () => {
    const normal = { type: 'custom', id: 'e1', z: [1, { b: 2, a: 1 }], s: 'x' };
    expect(toJsonText(normal)).toBe(JSON.stringify(normal));
    const line = `{"type":"custom","customType":"deep","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","data":${deepArrayText(DEEP, '"x"')}}`;
    const parsed = parseSession(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n${line}\n`);
    expect(parsed.problems).toEqual([]);
    expect(serializeLine(parsed.entries[0]!)).toBe(line);
  });
});

describe('canonicalJson and merge at depth', () => {
  it(`compares entries nested ${DEEP.toLocaleString('en')} deep by content, key order aside`, () => {
    const one = JSON.parse(`{"type":"custom","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","data":${deepObjectText(DEEP, '{"z":1,"y":2}')}}`) as SessionEntry;
    const two = JSON.parse(`{"timestamp":"2026-01-01T00:00:00.000Z","parentId":null,"id":"e1","type":"custom","data":${deepObjectText(DEEP, '{"y":2,"z":1}')}}`) as SessionEntry;
    const differs = JSON.parse(`{"type":"custom","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","data":${deepObjectText(DEEP, '{"y":3}')}}`) as SessionEntry;
    expect(canonicalJson(one)).toBe(canonicalJson(two));
    const m = mergeEntries(new Map([['e1', one]]), [{ entry: two }, { entry: differs, host: 'h2' }]);
    expect(m.duplicates).toBe(1);
    expect(m.conflicts.map((c) => c.host)).toEqual(['h2']);
  });
});

/** Redaction as the recursive walk did it, built from the public API string by string: the reference. */
function recursiveRedact(v: unknown, opts: RedactOptions, counts: RedactionCounts, scanOnly = false): unknown {
  const add = (c: RedactionCounts) => {
    for (const [k, n] of Object.entries(c)) counts[k as keyof RedactionCounts] = (counts[k as keyof RedactionCounts] ?? 0) + (n ?? 0);
  };
  if (typeof v === 'string') {
    if (scanOnly) {
      add(scanValue(v, opts));
      return v;
    }
    const r = redactValue(v, opts);
    add(r.counts);
    return r.value;
  }
  if (Array.isArray(v)) return v.map((x) => recursiveRedact(x, opts, counts, scanOnly));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    const isImage = (v as Record<string, unknown>).type === 'image';
    for (const [k, x] of Object.entries(v)) {
      add(scanValue(k, opts));
      out[k] = isImage && k === 'data' && typeof x === 'string' ? x : recursiveRedact(x, opts, counts, scanOnly);
    }
    return out;
  }
  return v;
}

// Built from parts so secret scanners do not flag this file; both are fake.
const AWS = 'AKIA' + 'IOSFODNN7EXAMPLE';
const GH = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';

describe('redaction at depth', () => {
  const texty = fc.oneof(
    fc.string(),
    fc.constantFrom(`key ${AWS} here`, `token=${GH}`, '/home/ann/src/app', 'plain words', 'image'),
  );
  const value = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small' }, texty, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('type', 'data', `k${AWS}`)), tie('v'), { maxKeys: 4 })),
  })).v;

  it('gives the same copy and counts as the recursive walk for normal input (property)', () => {
    const opts: RedactOptions = { homeDir: '/home/ann', secrets: [{ name: 'X_TOKEN', value: 'plain words', kind: 'env_var_value' }] };
    fc.assert(
      fc.property(value, (v) => {
        const counts: RedactionCounts = {};
        const want = recursiveRedact(v, opts, counts);
        const got = redactValue(v, opts);
        expect(got.value).toStrictEqual(want);
        expect(got.counts).toStrictEqual(counts);
        // A scan counts on the original text (a home matched by two patterns counts twice), so its reference scans too.
        const scanned: RedactionCounts = {};
        recursiveRedact(v, opts, scanned, true);
        expect(scanValue(v, opts)).toStrictEqual(scanned);
      }),
      { numRuns: 300 },
    );
  });

  it(`redacts a secret nested ${DEEP.toLocaleString('en')} deep, in objects and in arrays`, () => {
    const obj = JSON.parse(deepObjectText(DEEP, JSON.stringify(`key ${AWS}`))) as unknown;
    const r = redactValue(obj);
    expect(r.counts).toEqual({ aws_access_key: 1 });
    expect(jsonStringify(r.value)).toBe(deepObjectText(DEEP, JSON.stringify('key [REDACTED:aws_access_key]')));
    const arr = JSON.parse(deepArrayText(DEEP, JSON.stringify(GH))) as unknown;
    expect(totalOf(scanValue(arr))).toBe(1);
    expect(jsonStringify(redactValue(arr).value)).toBe(deepArrayText(DEEP, '"[REDACTED:github_token]"'));
  });

  it('keeps a __proto__ key as an own field of the copy, redacted, and leaves the prototype alone', () => {
    const v = JSON.parse(`{"__proto__":{"note":"key ${AWS}"},"b":1}`) as Record<string, unknown>;
    const r = redactValue(v);
    expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype);
    expect(Object.keys(r.value)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(r.value)).toBe('{"__proto__":{"note":"key [REDACTED:aws_access_key]"},"b":1}');
  });
});
