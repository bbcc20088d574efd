// The byte scan of entry lines: never certain of a line the full check (JSON.parse, checkEntry, the id rule, depth) refuses.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkEntry } from '../../shared/entry.js';
import { findTooDeepText } from '../../shared/json-limits.js';
import { ENTRY_ID_RE, LIMITS } from '../../shared/wire.js';
import { sameBytes, scanEntry, scanEntryLine, scanned } from '../../shared/entry-line-scan.js';

const enc = new TextEncoder();
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** What the full check says of a line's bytes: the entry when every check accepts it, else null. */
function fullCheck(bytes: Uint8Array, limit: number = LIMITS.maxJsonDepth): { id: string; parentId: string | null } | null {
  let text: string;
  try {
    text = fatal.decode(bytes);
  } catch {
    return null;
  }
  if (text.includes('\n') || findTooDeepText(text, limit) !== null) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (checkEntry(v) !== null) return null;
  const e = v as { id: string; parentId: string | null };
  return ENTRY_ID_RE.test(e.id) ? { id: e.id, parentId: e.parentId } : null;
}

/** The scan's answer, with the id and parent it found as text. */
function scan(bytes: Uint8Array, limit: number = LIMITS.maxJsonDepth): { id: string; parentId: string | null } | null {
  if (!scanEntryLine(bytes, 0, bytes.length, limit)) return null;
  const d = new TextDecoder();
  return { id: d.decode(bytes.subarray(scanned.idStart, scanned.idEnd)), parentId: scanned.parentStart < 0 ? null : d.decode(bytes.subarray(scanned.parentStart, scanned.parentEnd)) };
}

/** Sound: whatever the scan is certain of, the full check accepts, with the same id and parent. */
function expectSound(bytes: Uint8Array, limit: number = LIMITS.maxJsonDepth): void {
  const s = scan(bytes, limit);
  if (s !== null) expect({ line: new TextDecoder().decode(bytes), got: fullCheck(bytes, limit) }).toEqual({ line: new TextDecoder().decode(bytes), got: s });
}

const line = (v: unknown) => enc.encode(JSON.stringify(v));
const entry = (extra: Record<string, unknown> = {}) => ({ type: 'message', id: 'e-1', parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'hi' }, ...extra });

describe('scanEntryLine', () => {
  it('is certain of plain entries of every known type, and gives their id and parent', () => {
    const ok = [
      entry(),
      entry({ parentId: 'e-0', message: { content: [{ type: 'text', text: 'a "quoted" \\ line\nnext ünï €𝄞' }], role: 'assistant' } }),
      { type: 'model_change', id: 'm', parentId: 'e', timestamp: 't', provider: 'p', modelId: 'x' },
      { type: 'thinking_level_change', id: 'm', parentId: null, timestamp: 't', thinkingLevel: 'high' },
      { type: 'compaction', id: 'c', parentId: null, timestamp: 't', summary: 's', firstKeptEntryId: 'a', tokensBefore: 1.5e3 },
      { type: 'compaction', id: 'c', parentId: null, timestamp: 't', summary: 's' },
      { type: 'branch_summary', id: 'b', parentId: null, timestamp: 't', summary: 's', fromId: 'x' },
      { type: 'custom', id: 'u', parentId: null, timestamp: 't', customType: 'x', data: { a: [1, -2.5e-3, true, false, null] } },
      { type: 'custom_message', id: 'u', parentId: null, timestamp: 't', customType: 'x', content: 'c', display: true },
      { type: 'custom_message', id: 'u', parentId: null, timestamp: 't', customType: 'x', content: [] },
      { type: 'label', id: 'l', parentId: null, timestamp: 't', targetId: 'e' },
      { type: 'some_future_type', id: 'f', parentId: null, timestamp: 't' },
    ];
    for (const v of ok) {
      const b = line(v);
      expect(scan(b), JSON.stringify(v)).toEqual({ id: v.id, parentId: v.parentId });
      expect(fullCheck(b)).toEqual({ id: v.id, parentId: v.parentId });
    }
    // White space around and inside, a CR before the newline.
    expect(scanEntryLine(enc.encode(' { "type" : "x" ,\t"id":"a", "parentId" : null , "timestamp":"t" } \r'), 0, 0 + enc.encode(' { "type" : "x" ,\t"id":"a", "parentId" : null , "timestamp":"t" } \r').length)).toBe(true);
  });

  it('is not certain of what checkEntry, the id rule or JSON.parse refuse, nor of what it does not follow', () => {
    const doubtful: (string | Uint8Array)[] = [
      '',
      '   ',
      '[1]',
      '"x"',
      JSON.stringify(entry({ type: 'session' })),
      JSON.stringify(entry({ type: '' })),
      JSON.stringify(entry({ type: 3 })),
      JSON.stringify(entry({ id: '' })),
      JSON.stringify(entry({ id: '-lead' })),
      JSON.stringify(entry({ id: 'a b' })),
      JSON.stringify(entry({ id: 'x'.repeat(129) })),
      JSON.stringify(entry({ id: 'é' })),
      JSON.stringify(entry({ parentId: '' })),
      JSON.stringify(entry({ parentId: 7 })),
      JSON.stringify(entry({ parentId: 'a\\b' })), // an escape in the parent: not compared as bytes
      JSON.stringify(entry({ timestamp: 1 })),
      JSON.stringify({ type: 'message', id: 'a', parentId: null, message: { role: 'user' } }), // no timestamp
      JSON.stringify(entry({ message: { content: 'no role' } })),
      JSON.stringify(entry({ message: { role: 1 } })),
      JSON.stringify(entry({ message: 'text' })),
      JSON.stringify(entry({ message: [{ role: 'user' }] })),
      JSON.stringify({ type: 'model_change', id: 'm', parentId: null, timestamp: 't', provider: 'p' }),
      JSON.stringify({ type: 'thinking_level_change', id: 'm', parentId: null, timestamp: 't' }),
      JSON.stringify({ type: 'compaction', id: 'c', parentId: null, timestamp: 't', summary: 's', firstKeptEntryId: 1 }),
      JSON.stringify({ type: 'branch_summary', id: 'b', parentId: null, timestamp: 't' }),
      JSON.stringify({ type: 'custom', id: 'u', parentId: null, timestamp: 't' }),
      JSON.stringify({ type: 'custom_message', id: 'u', parentId: null, timestamp: 't', customType: 'x', content: {} }),
      JSON.stringify({ type: 'label', id: 'l', parentId: null, timestamp: 't', targetId: null }),
      // Repeated keys (JSON.parse keeps the last), escaped keys that may spell one of checkEntry's.
      '{"type":"message","id":"a","id":"b","parentId":null,"timestamp":"t","message":{"role":"u"}}',
      '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"u","role":1}}',
      '{"\\u0074ype":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"u"}}',
      '{"type":"mess\\u0061ge","id":"a","parentId":null,"timestamp":"t","message":{}}',
      // Two values glued (racing writers), trailing garbage, invalid JSON of every kind.
      JSON.stringify(entry()) + JSON.stringify(entry({ id: 'e-2' })),
      JSON.stringify(entry()) + ' x',
      JSON.stringify(entry()).slice(0, -1),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":01'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":1.'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":-'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":1e'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":tru'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":NaN'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":[1,]'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":{"a"}'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":"\\x"'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":"\\u12g4"'),
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":"a\tb"'), // a raw tab inside a string
      JSON.stringify(entry({ n: 1 })).replace('"n":1', '"n":1,'),
      '\ufeff' + JSON.stringify(entry()), // a byte-order mark
      JSON.stringify(entry()).replace('}', '}\n'), // a newline inside the line's bytes
    ];
    for (const d of doubtful) {
      const b = typeof d === 'string' ? enc.encode(d) : d;
      expect(scanEntryLine(b, 0, b.length), typeof d === 'string' ? d : '').toBe(false);
    }
  });

  it('is not certain of bytes that are not UTF-8', () => {
    const base = JSON.stringify(entry({ n: 'XX' }));
    const at = enc.encode(base).indexOf(0x58); // the first X
    for (const bad of [[0x80], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf0, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xff], [0xe2, 0x82]]) {
      const b = enc.encode(base);
      const out = new Uint8Array(b.length + bad.length);
      out.set(b.subarray(0, at));
      out.set(bad, at);
      out.set(b.subarray(at), at + bad.length);
      expect(scanEntryLine(out, 0, out.length), bad.join(',')).toBe(false);
    }
    // Well-formed ones of each length are taken.
    for (const good of ['é', '€', '𝄞', '\u{10ffff}', '\ud7ff', '\ue000']) expect(scan(line(entry({ n: good })))).not.toBeNull();
  });

  it('is not certain of bytes past the view it scanned before, when a resizable buffer grew since', () => {
    // Length-tracking view over a resizable buffer: the first scan makes the word view, the buffer then grows.
    const Resizable = ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer & { resize(n: number): void };
    const buf = new Resizable(102, { maxByteLength: 4096 });
    const view = new Uint8Array(buf);
    const first = enc.encode(`{"type":"x","id":"a","parentId":null,"timestamp":"t","pad":"${'p'.repeat(40)}"}`);
    view.set(first);
    expect(scanEntryLine(view, 0, first.length)).toBe(true);
    buf.resize(402);
    const head = enc.encode('{"type":"x","id":"a","parentId":null,"timestamp":"t","pad":"');
    view.fill(0x61, 0, 400);
    view.set(head);
    view[200] = 0x00; // a raw control character, an invalid byte and a quote that ends the string early,
    view[201] = 0xff; // all past the first view's end
    view[202] = 0x22;
    view.set(enc.encode('"}'), 400);
    expect(view.length).toBe(402);
    expect(scanEntryLine(view, 0, 402)).toBe(false);
  });

  it('agrees with the full check on every byte inside a string, after a backslash, and as a value', () => {
    const [pre, post] = JSON.stringify(entry({ n: '@' })).split('@') as [string, string];
    const at = (mid: number[]) => Uint8Array.from([...enc.encode(pre), ...mid, ...enc.encode(post)]);
    for (let c = 0; c < 256; c++) {
      for (const b of [at([c]), at([0x5c, c]), at([0x5c, 0x75, c, 0x30, 0x30, 0x30])]) expect(scan(b), String(c)).toEqual(fullCheck(b));
      // As (the start of) a value: the text `"n":X` with X one byte or a number's text.
      const v = JSON.stringify(entry({ n: 0 })).replace('"n":0', `"n":${String.fromCharCode(c)}`);
      expectSound(Uint8Array.from(v, (ch) => ch.charCodeAt(0)));
    }
    for (const n of ['0', '-0', '1', '-1', '10', '01', '1.', '.1', '1.5', '1e5', '1E+5', '1e-5', '1e', '1e+', '-', '--1', '+1', '0x1', '1.2.3', '1e5e5', 'Infinity', '0.0e0']) {
      const b = enc.encode(JSON.stringify(entry({ n: 0 })).replace('"n":0', `"n":${n}`));
      expect(scan(b), n).toEqual(fullCheck(b));
    }
  });

  it('agrees with the full check on every byte at every place of a long string, whatever the view\'s alignment', () => {
    // Past its first 16 bytes a string is skipped a word and two words at a time: each byte in each lane of them.
    const [pre, post] = JSON.stringify(entry({ n: '@' })).split('@') as [string, string];
    const head = enc.encode(pre);
    const tail = enc.encode(post);
    const store = new Uint8Array(head.length + 64 + tail.length + 8);
    for (let shift = 0; shift < 4; shift++) {
      const b = store.subarray(shift, shift + head.length + 64 + tail.length);
      b.set(head);
      b.set(tail, head.length + 64);
      for (let at = 16; at < 40; at++) {
        for (let c = 0; c < 256; c++) {
          b.fill(0x61, head.length, head.length + 64);
          b[head.length + at] = c;
          expect(scan(b), `byte ${c} at ${at}, shift ${shift}`).toEqual(fullCheck(b));
        }
      }
    }
  });

  it('stops at the depth limit as findTooDeepText does', () => {
    const nest = (n: number) => `{"type":"x","id":"a","parentId":null,"timestamp":"t","d":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    expect(scanEntryLine(enc.encode(nest(64)), 0, enc.encode(nest(64)).length)).toBe(true);
    expect(scanEntryLine(enc.encode(nest(65)), 0, enc.encode(nest(65)).length)).toBe(false);
    expect(scanEntryLine(enc.encode(nest(3)), 0, enc.encode(nest(3)).length, 3)).toBe(true);
    expect(scanEntryLine(enc.encode(nest(4)), 0, enc.encode(nest(4)).length, 3)).toBe(false);
    // Brackets inside strings do not count.
    const s = line(entry({ d: '[[[[[[[[[[{{{{{{{{{{' }));
    expect(scanEntryLine(s, 0, s.length, 2)).toBe(true);
  });

  it('scanEntry finds where each line of a body ends, in one pass', () => {
    const body = enc.encode([entry(), entry({ id: 'e-2', parentId: 'e-1' })].map((v) => JSON.stringify(v)).join('\n') + '\n');
    const first = scanEntry(body, 0, body.length);
    expect(body[first]).toBe(0x0a);
    const second = scanEntry(body, first + 1, body.length);
    expect(second).toBe(body.length - 1);
    // The parent of the second line is the id of the first, compared as bytes.
    const idOf = (start: number) => (scanEntry(body, start, body.length), [scanned.idStart, scanned.idEnd] as const);
    const [is, ie] = idOf(0);
    scanEntry(body, first + 1, body.length);
    expect(sameBytes(body, scanned.parentStart, scanned.parentEnd, body, is, ie)).toBe(true);
    // The last line needs no newline; a value going on past one is not a line.
    expect(scanEntry(body, first + 1, body.length - 1)).toBe(body.length - 1);
    expect(scanEntry(enc.encode('{"a":\n1}'), 0, 8)).toBe(-1);
  });

  // The property: on random entries, random JSON and random corruption of both, the scan is never certain of a line
  // the full check refuses, and finds the same id and parent when it is certain.
  const idArb = fc.oneof(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,20}$/), fc.string({ maxLength: 6 }), fc.constant(''), fc.constant('x'.repeat(128)), fc.constant('x'.repeat(129)));
  const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: 'grapheme', maxLength: 8 }));
  const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 3 });
  const entryArb = fc
    .record({
      type: maybe(fc.oneof(fc.constantFrom('message', 'model_change', 'thinking_level_change', 'compaction', 'branch_summary', 'custom', 'custom_message', 'label', 'session', '', 'other'), anyValue)),
      id: maybe(fc.oneof(idArb, anyValue)),
      parentId: maybe(fc.oneof(fc.constant(null), idArb, anyValue)),
      timestamp: maybe(fc.oneof(fc.constant('2026-01-01T00:00:00.000Z'), anyValue)),
      message: maybe(fc.oneof(fc.record({ role: maybe(fc.oneof(fc.constantFrom('user', 'assistant'), anyValue)), content: maybe(anyValue) }, { requiredKeys: [] }), anyValue)),
      provider: maybe(fc.oneof(fc.string(), anyValue)),
      modelId: maybe(fc.oneof(fc.string(), anyValue)),
      thinkingLevel: maybe(fc.oneof(fc.string(), anyValue)),
      summary: maybe(fc.oneof(fc.string(), anyValue)),
      firstKeptEntryId: maybe(fc.oneof(fc.string(), anyValue)),
      customType: maybe(fc.oneof(fc.string(), anyValue)),
      content: maybe(fc.oneof(fc.string(), fc.array(anyValue, { maxLength: 2 }), anyValue)),
      targetId: maybe(fc.oneof(fc.string(), anyValue)),
      extra: maybe(fc.dictionary(fc.string({ maxLength: 4 }), anyValue, { maxKeys: 3 })),
    }, { requiredKeys: [] })
    .map((r) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) if (v !== undefined && k !== 'extra') o[k] = v;
      return { ...(r.extra ?? {}), ...o };
    });
  /** Entries the full check accepts, with random content: corrupting these is what tests the grammar where it matters. */
  const goodArb = fc
    .record({ id: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}$/), parentId: fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}$/), { nil: null }), text: fc.string({ unit: 'binary', maxLength: 40 }), payload: fc.jsonValue({ maxDepth: 3 }) })
    .map(({ id, parentId, text, payload }) => ({ type: 'message', id, parentId, timestamp: 't', message: { role: 'user', content: [{ type: 'text', text }] }, payload }));
  const textArb = fc.oneof({ weight: 4, arbitrary: goodArb.map((v) => JSON.stringify(v)) }, { weight: 4, arbitrary: entryArb.map((v) => JSON.stringify(v)) }, { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) }, { weight: 1, arbitrary: entryArb.map((v) => JSON.stringify(v, null, 1).replace(/\n/g, ' ')) });
  /** Corruption: bytes replaced, inserted or dropped, among them the ones the grammar turns on. */
  const special = fc.constantFrom(0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x09, 0x0d, 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xe2, 0xf0, 0xff, 0x30, 0x2d, 0x2e, 0x65, 0x75, 0x6e, 0x74);
  const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('set', 'insert', 'drop'), byte: fc.oneof(special, fc.integer({ min: 0, max: 255 })) });
  const corrupt = (b: Uint8Array, edits: { at: number; kind: string; byte: number }[]): Uint8Array => {
    let out = Array.from(b);
    for (const e of edits) {
      const at = out.length === 0 ? 0 : e.at % (out.length + (e.kind === 'insert' ? 1 : 0));
      if (e.kind === 'set' && out.length > 0) out[at] = e.byte;
      else if (e.kind === 'insert') out.splice(at, 0, e.byte);
      else if (out.length > 0) out.splice(at, 1);
    }
    return Uint8Array.from(out);
  };

  it('property: never certain of a line the full check refuses, same id and parent when certain', () => {
    fc.assert(
      fc.property(textArb, fc.array(edit, { maxLength: 3 }), fc.constantFrom(LIMITS.maxJsonDepth, 1, 2, 3), (text, edits, limit) => {
        const b = enc.encode(text);
        expectSound(b, limit);
        expectSound(corrupt(b, edits), limit);
      }),
      { numRuns: 20_000 },
    );
  });

  it('property: certain of every plain entry (no escape in its type, keys or parent, one of each key)', () => {
    const plainId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,30}$/);
    fc.assert(
      fc.property(plainId, fc.option(plainId, { nil: null }), fc.jsonValue({ maxDepth: 5 }), fc.string({ unit: 'grapheme' }), (id, parentId, payload, text) => {
        const b = line({ type: 'message', id, parentId, timestamp: 't', message: { role: 'user', content: [{ type: 'text', text }], payload } });
        expect(scan(b)).toEqual({ id, parentId });
      }),
      { numRuns: 3_000 },
    );
  });
});
