// JSONL parsing: torn and corrupt lines become problems and lose nothing around them; chunked parsing equals whole parsing.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseSession, parseSessionChunks, parseSessionChunksSync, serializeLine, serializeSession, SessionParser, type ByteDecoder } from '../../shared/jsonl.js';
import { header, LogBuilder } from './log-builder.js';
import { splitJsonValues } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { deterministicId } from '../../shared/ids.js';

const H = serializeLine(header());
const line = (id: string, parentId: string | null) =>
  serializeLine({ type: 'message', id, parentId, timestamp: '2026-01-01T10:00:00.000Z', message: { role: 'user', content: id } });

describe('lines holding several JSON values', () => {
  it('splitJsonValues cuts only where a top-level value closes, strings and escapes respected', () => {
    expect(splitJsonValues('{"a":"}{"}{"b":"\\"}"}')).toEqual(['{"a":"}{"}', '{"b":"\\"}"}']);
    expect(splitJsonValues('{"a":1}  [2]')).toEqual(['{"a":1}', '[2]']);
    expect(splitJsonValues('{"a":1}')).toBeNull(); // one value: not a split
    expect(splitJsonValues('{"type":"mess')).toBeNull();
    expect(splitJsonValues('}{')).toBeNull();
  });

  it('reports each split line; a v1 file gives each value its own line-derived id', async () => {
    const v1h = serializeLine({ type: 'session', id: 'v1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/r' });
    const m = (t: string) => serializeLine({ type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: t } });
    const p = parseSession(`${v1h}\n${m('one')}${m('two')}\n${m('three')}\n`);
    expect(p.problems).toEqual([]);
    expect(p.splitLines).toEqual([{ line: 2, values: 2, bad: 0 }]);
    expect(p.entryLines).toEqual([2, 2, 3]);
    expect(p.entryPieces).toEqual([0, 1, 0]);
    const ids = (await migrateSession(p)).entries.map((e) => e.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids).toEqual(await Promise.all(['v1:1', 'v1:1:1', 'v1:2'].map(deterministicId)));
  });
});

describe('parseSession problems', () => {
  const cases: { name: string; text: string; ids: string[]; problems: [number, RegExp][]; torn: boolean; hasHeader?: boolean }[] = [
    { name: 'clean file', text: `${H}\n${line('a', null)}\n${line('b', 'a')}\n`, ids: ['a', 'b'], problems: [], torn: false },
    { name: 'last line without newline but complete', text: `${H}\n${line('a', null)}\n${line('b', 'a')}`, ids: ['a', 'b'], problems: [], torn: false },
    { name: 'torn last line', text: `${H}\n${line('a', null)}\n${line('b', 'a').slice(0, 30)}`, ids: ['a'], problems: [[3, /torn last line/]], torn: true },
    { name: 'corrupt middle line keeps both neighbours', text: `${H}\n${line('a', null)}\n{"type":"mess\n${line('c', 'a')}\n`, ids: ['a', 'c'], problems: [[3, /invalid JSON/]], torn: false },
    { name: 'torn line later completed by an append on the next line', text: `${H}\n${line('a', null)}\n{"type":"mes\n${line('c', 'a')}\n`, ids: ['a', 'c'], problems: [[3, /invalid JSON/]], torn: false },
    { name: 'blank lines carry nothing', text: `${H}\n\n${line('a', null)}\n   \n${line('b', 'a')}\n\n`, ids: ['a', 'b'], problems: [], torn: false },
    { name: 'byte-order mark before the header', text: `\uFEFF${H}\n${line('a', null)}\n`, ids: ['a'], problems: [], torn: false },
    { name: 'CRLF line ends', text: `${H}\r\n${line('a', null)}\r\n`, ids: ['a'], problems: [], torn: false },
    { name: 'entry without id', text: `${H}\n{"type":"message","parentId":null,"timestamp":"t","message":{"role":"user"}}\n${line('b', null)}\n`, ids: ['b'], problems: [[2, /without an "id"/]], torn: false },
    { name: 'entry that is not an object', text: `${H}\n[1,2]\n42\n${line('b', null)}\n`, ids: ['b'], problems: [[2, /not a JSON object/], [3, /not a JSON object/]], torn: false },
    { name: 'a second header', text: `${H}\n${H}\n${line('a', null)}\n`, ids: ['a'], problems: [[2, /second session header/]], torn: false },
    { name: 'no header: entries still load', text: `${line('a', null)}\n${line('b', 'a')}\n`, ids: ['a', 'b'], problems: [[1, /no session header/]], torn: false, hasHeader: false },
    { name: 'corrupt header line', text: `{"type":"sess\n${line('a', null)}\n`, ids: ['a'], problems: [[1, /invalid JSON/]], torn: false, hasHeader: false },
    { name: 'empty file', text: '', ids: [], problems: [], torn: false, hasHeader: false },
    { name: 'model_change missing its fields', text: `${H}\n{"type":"model_change","id":"m","parentId":null,"timestamp":"t"}\n`, ids: [], problems: [[2, /model_change/]], torn: false },
    // Two writers raced: complete values glued on one line are each loaded; a broken one is still reported.
    { name: 'two complete entries on one line', text: `${H}\n${line('a', null)}${line('b', 'a')}\n${line('c', 'b')}\n`, ids: ['a', 'b', 'c'], problems: [], torn: false },
    { name: 'three values, the middle one broken', text: `${H}\n${line('a', null)} {"type":"message","id":x}${line('b', 'a')}\n`, ids: ['a', 'b'], problems: [[2, /invalid JSON: value 2 of 3/]], torn: false },
    { name: 'mismatched brackets are not split', text: `${H}\n${line('a', null)}{"id":"x"]}\n`, ids: [], problems: [[2, /invalid JSON/]], torn: false },
    { name: 'a complete entry glued to a torn one', text: `${H}\n${line('a', null)}${line('b', 'a').slice(0, 40)}\n${line('c', 'a')}\n`, ids: ['a', 'c'], problems: [[2, /value 2 of 2 on this line/]], torn: false },
    { name: 'glued values that are not entries', text: `${H}\n${line('a', null)}[1]\n`, ids: ['a'], problems: [[2, /not a JSON object/]], torn: false },
    { name: 'bad parentId type', text: `${H}\n{"type":"label","id":"l","parentId":5,"timestamp":"t","targetId":"x"}\n`, ids: [], problems: [[2, /parentId/]], torn: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = parseSession(c.text);
      expect(p.entries.map((e) => e.id)).toEqual(c.ids);
      expect(p.problems.map((x) => x.line)).toEqual(c.problems.map((x) => x[0]));
      p.problems.forEach((x, i) => expect(x.reason).toMatch(c.problems[i]![1]));
      expect(p.tornTail).toBe(c.torn);
      expect(p.header !== null).toBe(c.hasHeader ?? true);
    });
  }

  it('version is the header version, 1 when absent, and v1 lines need no ids', () => {
    expect(parseSession(`${H}\n`).version).toBe(3);
    const v1 = parseSession('{"type":"session","id":"s","timestamp":"t","cwd":"/"}\n{"type":"message","timestamp":"t","message":{"role":"user","content":"x"}}\n');
    expect(v1.version).toBe(1);
    expect(v1.entries).toHaveLength(1);
    expect(v1.problems).toEqual([]);
  });

  it('an unknown entry type and unknown fields round-trip byte for byte', () => {
    const lines = [
      '{"type":"future_thing","id":"f1","parentId":null,"timestamp":"2026-01-01T10:00:00.000Z","payload":{"nested":[1,"two",{"three":null}],"ü":"✓"},"zeta":true}',
      '{"type":"message","id":"m1","parentId":"f1","timestamp":"2026-01-01T10:00:01.000Z","message":{"role":"user","content":"hi","newField":{"x":1}},"extra":"kept"}',
    ];
    const hdr = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/r","futureHeaderField":{"a":1}}';
    const text = [hdr, ...lines].join('\n') + '\n';
    const p = parseSession(text);
    expect(p.problems).toEqual([]);
    expect(p.entries.map(serializeLine)).toEqual(lines);
    expect(serializeSession(p.header!, p.entries)).toBe(text);
  });
});

describe('chunked parsing', () => {
  const b = new LogBuilder();
  b.user('a', null, 'hello — ünïcödé 🙂');
  b.assistant('b', 'a', 'reply\nwith newline escaped');
  b.add('c', 'b', 'custom', { customType: 'x', data: { s: '🙂'.repeat(50) } });
  const text = b.text() + '{"type":"message","id":"d","par';
  const whole = parseSession(text);

  it('gives the same result as one push, wherever the text is cut', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 12 }), (cuts) => {
        const points = [...cuts].sort((x, y) => x - y);
        const p = new SessionParser();
        let prev = 0;
        for (const c of points) {
          p.push(text.slice(prev, c));
          prev = c;
        }
        p.push(text.slice(prev));
        expect(p.end()).toEqual(whole);
      }),
    );
  });

  it('decodes UTF-8 byte chunks split inside multi-byte characters', async () => {
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, 64, 4096]) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      expect(await parseSessionChunks(chunks)).toEqual(whole);
    }
    expect(whole.entries.map((e) => e.id)).toEqual(['a', 'b', 'c']);
    expect(whole.tornTail).toBe(true);
  });

  it('reads async sources, and sync sources that reuse one buffer', async () => {
    const bytes = new TextEncoder().encode(text);
    async function* slow() {
      for (let i = 0; i < bytes.length; i += 5) yield bytes.slice(i, i + 5);
    }
    expect(await parseSessionChunks(slow())).toEqual(whole);
    function* reused() {
      const buf = new Uint8Array(7);
      for (let i = 0; i < bytes.length; i += 7) {
        const part = bytes.subarray(i, i + 7);
        buf.set(part);
        yield buf.subarray(0, part.length);
        buf.fill(0x7b); // the source overwrites its buffer before the next chunk
      }
    }
    expect(parseSessionChunksSync(reused())).toEqual(whole);
  });

  it('decodes chunks larger than its internal decode slice (multi-byte characters across slice edges)', async () => {
    const big = new LogBuilder();
    big.user('x', null, 'é🙂'.repeat(30_000)); // 180 KB of 2- and 4-byte characters on one line
    big.user('y', 'x', 'after');
    const t = big.text();
    const bytes = new TextEncoder().encode(t);
    for (const skew of [0, 1, 2, 3]) {
      const parsed = await parseSessionChunks([bytes.subarray(0, 1000 + skew), bytes.subarray(1000 + skew)]);
      expect(parsed).toEqual(parseSession(t));
      expect(parsed.entries.map((e) => e.id)).toEqual(['x', 'y']);
    }
  });
});

describe('chunked parsing with a host decoder (one-byte runs sliced, other lines decoded alone)', () => {
  // A decoder like the CLI's, in plain JS: a real ASCII check and a real one-byte decoding.
  const td = new TextDecoder('utf-8', { ignoreBOM: true });
  const calls = { oneByte: 0, utf8: 0 };
  const decoder: ByteDecoder = {
    isAscii: (b, s, e) => b.subarray(s, e).every((x) => x < 0x80),
    oneByte: (b, s, e) => {
      calls.oneByte++;
      return String.fromCharCode(...b.subarray(s, e));
    },
    utf8: (b, s, e) => {
      calls.utf8++;
      return td.decode(b.subarray(s, e));
    },
  };
  const b = new LogBuilder();
  for (let i = 0; i < 40; i++) b.user(`m${i}`, i === 0 ? null : `m${i - 1}`, i % 3 === 0 ? `line ${i} — ünï 🙂` : `plain line ${i}`);
  const text = '\uFEFF' + b.text() + '{"type":"message","id":"torn","par';
  const bytes = new TextEncoder().encode(text);
  const whole = parseSession(text);

  it('gives the same result as parseSession wherever the bytes are cut', () => {
    expect(whole.entries).toHaveLength(40);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 10 }), (cuts) => {
        const points = [0, ...[...cuts].sort((x, y) => x - y), bytes.length];
        const chunks: Uint8Array[] = [];
        for (let i = 1; i < points.length; i++) chunks.push(bytes.subarray(points[i - 1]!, points[i]!));
        expect(parseSessionChunksSync(chunks, decoder)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes only the non-ASCII lines as UTF-8', () => {
    calls.oneByte = 0;
    calls.utf8 = 0;
    const clean = new TextEncoder().encode(b.text());
    expect(parseSessionChunksSync([clean], decoder)).toEqual(parseSession(b.text()));
    expect(calls.utf8).toBe(14); // lines 0, 3, ..., 39
    expect(calls.oneByte).toBe(1); // one one-byte string for the whole chunk, sliced per line
  });
});

describe('damage anywhere (property)', () => {
  it('cutting or garbling any one line loses only that line', () => {
    const b = new LogBuilder();
    for (let i = 0; i < 12; i++) b.user(`m${i}`, i === 0 ? null : `m${i - 1}`, `text ${i} ünï`);
    const lines = b.text().split('\n').slice(0, -1); // header + 12 entries
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.nat(), fc.boolean(), fc.boolean(), (which, cutAt, garble, lastNewline) => {
        const damaged = [...lines];
        const l = damaged[which]!;
        damaged[which] = garble ? l.slice(0, cutAt % l.length) + '\u0000}{' : l.slice(0, cutAt % l.length);
        let text = damaged.join('\n');
        if (lastNewline || which < 12) text += '\n';
        const p = parseSession(text);
        const expected = b.entries.filter((_, i) => i !== which - 1).map((x) => x.id);
        expect(p.entries.map((x) => x.id)).toEqual(expected);
        expect(p.problems.every((x) => x.line === which + 1)).toBe(true);
        expect(p.tornTail).toBe(which === 12 && !lastNewline && p.problems.length === 1);
      }),
      { numRuns: 300 },
    );
  });
});
