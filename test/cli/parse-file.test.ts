// parseSessionFile (64 KiB reads, Latin-1 for ASCII lines, UTF-8 for the rest) gives what parseSession gives for the same bytes.
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSessionFile } from '../../cli/store/parse-file.js';
import { parseSession, serializeLine } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';
import { header, LogBuilder } from '../shared/log-builder.js';
import { tempDir } from '../helpers/cli.js';

const tmp = tempDir('sessync-parse-file-');
afterAll(() => tmp.cleanup());

const enc = new TextEncoder();
// What any reader makes of these bytes: invalid UTF-8 becomes U+FFFD, a byte-order mark stays for the parser to drop.
const asText = (bytes: Uint8Array) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

function write(name: string, bytes: Uint8Array): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, bytes);
  return path;
}

function concat(...parts: (string | Uint8Array)[]): Uint8Array {
  const bufs = parts.map((p) => (typeof p === 'string' ? enc.encode(p) : p));
  const out = new Uint8Array(bufs.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bufs) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

describe('parseSessionFile', () => {
  const mixed = new LogBuilder();
  mixed.user('a', null, 'plain ascii');
  mixed.user('b', 'a', 'latin-1 range: é ü ñ');
  mixed.user('c', 'b', 'two-byte — ✓ … → and astral 🙂');
  mixed.user('d', 'c', 'plain again');

  // A line longer than one 64 KiB read, with multi-byte characters across the read edges.
  const long = new LogBuilder();
  long.user('x', null, 'é🙂—'.repeat(12_000) + 'a'.repeat(70_000));
  long.user('y', 'x', 'after the long line ✓');

  // Many lines over many 64 KiB reads: runs of ASCII lines, lines with other characters among them.
  const many = new LogBuilder();
  for (let i = 0; i < 3000; i++) many.user(`n${i}`, i === 0 ? null : `n${i - 1}`, i % 7 === 3 ? `row ${i} — ✓ é 🙂 ${'x'.repeat(i % 50)}` : `row ${i} ${'y'.repeat(i % 90)}`);
  const ascii = new LogBuilder();
  for (let i = 0; i < 3000; i++) ascii.user(`a${i}`, i === 0 ? null : `a${i - 1}`, `plain ${i} ${'z'.repeat(i % 120)}`);

  const cases: { name: string; bytes: Uint8Array; ids: string[]; torn?: boolean; problemLines?: number[] }[] = [
    { name: 'ASCII and non-ASCII lines mixed', bytes: enc.encode(mixed.text()), ids: ['a', 'b', 'c', 'd'] },
    { name: 'a line longer than a read, cut inside characters', bytes: enc.encode(long.text()), ids: ['x', 'y'] },
    { name: 'many lines over many reads, mixed', bytes: enc.encode(many.text()), ids: many.entries.map((e) => e.id) },
    { name: 'many lines over many reads, all ASCII', bytes: enc.encode(ascii.text()), ids: ascii.entries.map((e) => e.id) },
    { name: 'byte-order mark before the header', bytes: concat('\uFEFF', mixed.text()), ids: ['a', 'b', 'c', 'd'] },
    {
      name: 'invalid UTF-8 inside a string value loads as U+FFFD',
      bytes: concat(`${serializeLine(header())}\n{"type":"custom","customType":"t","id":"z","parentId":null,"timestamp":"t","data":"`, new Uint8Array([0xff, 0xc3]), '"}\n'),
      ids: ['z'],
    },
    {
      name: 'a non-ASCII byte outside any string is a corrupt line, and only that line',
      bytes: concat(mixed.text(), new Uint8Array([0xe2, 0x80, 0x94]), '{}\n', serializeLine({ type: 'custom', customType: 't', id: 'e', parentId: 'd', timestamp: 't' }), '\n'),
      ids: ['a', 'b', 'c', 'd', 'e'],
      problemLines: [6],
    },
    { name: 'torn last line with a cut character', bytes: enc.encode(mixed.text() + '{"type":"message","id":"q","message":"🙂').subarray(0, -2), ids: ['a', 'b', 'c', 'd'], torn: true, problemLines: [6] },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const path = write(`${c.name.replace(/\W+/g, '-')}.jsonl`, c.bytes);
      const fromFile = parseSessionFile(path);
      expect(fromFile).toEqual(parseSession(asText(c.bytes)));
      expect(fromFile.entries.map((e) => e.id)).toEqual(c.ids);
      expect(fromFile.tornTail).toBe(c.torn ?? false);
      expect(fromFile.problems.map((p) => p.line)).toEqual(c.problemLines ?? []);
      expect(fromFile.header?.id).toBe('sess-1');
    });
  }

  it('keeps every character of the non-ASCII lines', () => {
    const parsed = parseSessionFile(write('chars.jsonl', enc.encode(mixed.text())));
    const texts = parsed.entries.map((e) => ((e.message as { content: { text: string }[] }).content[0]!.text));
    expect(texts).toEqual(['plain ascii', 'latin-1 range: é ü ñ', 'two-byte — ✓ … → and astral 🙂', 'plain again']);
    const longParsed = parseSessionFile(write('long.jsonl', enc.encode(long.text())));
    expect(longParsed.entries).toEqual(long.entries);
    expect(parseSessionFile(write('many.jsonl', enc.encode(many.text()))).entries).toEqual(many.entries);
  });

  it('a file past the bulk-load size (16 MB) parses the same, and a second parse after it too', () => {
    const big = new LogBuilder();
    const filler = 'x'.repeat(4000) + ' é ';
    for (let i = 0; i < 4500; i++) big.user(`b${i}`, i === 0 ? null : `b${i - 1}`, `${i} ${filler}`);
    const text = big.text();
    expect(text.length).toBeGreaterThan(16 << 20);
    const path = write('big.jsonl', enc.encode(text));
    const parsed = parseSessionFile(path);
    expect(parsed.entries).toHaveLength(4500);
    expect(parsed).toEqual(parseSession(text));
    expect(parseSessionFile(path).entries).toHaveLength(4500);
  });

  it('a missing file is not_found', () => {
    expect(() => parseSessionFile(join(tmp.dir, 'nope.jsonl'))).toThrow(SessyncError);
    try {
      parseSessionFile(join(tmp.dir, 'nope.jsonl'));
    } catch (e) {
      expect((e as SessyncError).code).toBe('not_found');
    }
  });
});
