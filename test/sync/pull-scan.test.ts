// A first pull's page checked on its bytes (pull-scan's scanNewFile): whenever it takes a page, the file's bytes, counts
// and tail state are those of the full decode; it never takes a page with anything the full decode skips or names.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { serializeLine } from '../../shared/jsonl.js';
import { decode, newFileLines } from '../../cli/sync/pull-decode.js';
import { scanNewFile } from '../../cli/sync/pull-scan.js';
import type { OpenedBatch } from '../../cli/keys/open-pull.js';

/** A line of a batch: an entry (id, parent, second, kind) or a raw line that is not a plain entry. */
type Line = { id: number; parent: number | null; t: number; kind: 'message' | 'info' | 'label' | 'v'; text: string } | { raw: string };

const BAD_LINES = [
  '{"type":"message","id":', // cut short
  '', // an empty line
  '   ', // white space only
  '\ufeff{"type":"label","id":"b1","parentId":null,"timestamp":"t","targetId":"x"}', // a BOM
  `{"type":"custom","id":"d1","parentId":null,"timestamp":"t","customType":"c","data":${'['.repeat(70)}${']'.repeat(70)}}`, // too deep
  '{"type":"message","id":"m1","parentId":null,"timestamp":"t"}', // a message without its message
  '{"type":"session","id":"s1","parentId":null,"timestamp":"t"}', // a second header
  '{"type":"label","id":"e1","parentId":null,"timestamp":"t","targetId":"x"} {"x":1}', // two values glued
];

const entryArb = fc.record({
  id: fc.integer({ min: 0, max: 12 }),
  parent: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
  t: fc.integer({ min: 0, max: 4 }),
  kind: fc.constantFrom('message' as const, 'info' as const, 'label' as const, 'v' as const),
  text: fc.constantFrom('a', 'é ✓', 'q"\\n', '{[[{'),
});
const lineArb: fc.Arbitrary<Line> = fc.oneof({ weight: 9, arbitrary: entryArb }, { weight: 1, arbitrary: fc.constantFrom(...BAD_LINES).map((raw) => ({ raw })) });

/** One chain: entries n0, n0+1, ... each the child of the one before (the first's parent, if any, outside the page). */
const chainArb = fc
  .tuple(fc.array(fc.array(fc.constantFrom('message' as const, 'info' as const, 'label' as const, 'v' as const), { minLength: 0, maxLength: 5 }), { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([batches, rooted]) => {
    let n = rooted ? 100 : 0;
    return batches.map((kinds) => kinds.map((kind): Line => ({ id: n, parent: n === 0 ? null : n - 1, t: n++ % 5, kind, text: kind === 'info' ? `name ${n}` : 'x' })));
  })
  .filter((page) => page.some((b) => b.length > 0));

function lineText(l: Line): string {
  if ('raw' in l) return l.raw;
  const base = { id: `e${l.id}`, parentId: l.parent === null ? null : `e${l.parent}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, l.t)).toISOString() };
  switch (l.kind) {
    case 'message':
      return serializeLine({ type: 'message', ...base, message: { role: 'user', content: l.text } } as never);
    case 'info':
      return serializeLine({ type: 'session_info', ...base, name: l.text } as never);
    case 'label':
      return serializeLine({ type: 'label', ...base, targetId: 'e0', label: l.text } as never);
    default:
      return serializeLine({ type: 'thinking_level_change', ...base, thinkingLevel: l.text } as never);
  }
}

/** How a batch's body is spoiled: not at all, its sha-256 names other bytes, its last newline gone, a byte not UTF-8. */
type Spoil = 'none' | 'sha' | 'no-newline' | 'not-utf8';

function batchesOf(page: Line[][], spoil: Spoil[] = []): OpenedBatch[] {
  return page.map((lines, i) => {
    let bytes = Buffer.from(lines.map((l) => lineText(l) + '\n').join(''), 'utf8');
    const s = spoil[i] ?? 'none';
    if (s === 'no-newline' && bytes.length > 0) bytes = bytes.subarray(0, bytes.length - 1);
    if (s === 'not-utf8' && bytes.length > 20) bytes = Buffer.concat([bytes.subarray(0, 20), Buffer.from([0xff]), bytes.subarray(21)]);
    const sha256 = createHash('sha256').update(s === 'sha' ? Buffer.concat([bytes, Buffer.from('x')]) : bytes).digest('hex');
    const envelope = { host: 'h1', seq: i + 1, batchId: `b${i}`, entryCount: lines.length, encoding: 'jsonl' as const, sha256 };
    return { envelope, body: new Uint8Array(bytes) } as unknown as OpenedBatch;
  });
}

/** The full decode's new file, as pull makes it when the scan gives up. */
function fullDecode(batches: OpenedBatch[]) {
  const decoded = batches.map((b) => decode('sess', b, undefined));
  const incoming = decoded.flatMap((d) => d.entries);
  return { fresh: newFileLines(decoded, incoming, false), problems: decoded.flatMap((d) => d.problems) };
}

const joined = (lines: readonly Uint8Array[]) => Buffer.concat(lines.map((l) => Buffer.from(l))).toString('latin1');

function expectSameAsFull(batches: OpenedBatch[]): boolean {
  const scan = scanNewFile(batches);
  if (!scan.fresh) {
    // What it hashed before giving up matched (the full decode then does not hash those again).
    for (const b of batches.slice(0, scan.shaChecked)) expect(createHash('sha256').update(b.body).digest('hex')).toBe(b.envelope.sha256);
    return false;
  }
  const full = fullDecode(batches);
  expect(full.problems).toEqual([]);
  expect(joined(scan.fresh.lines)).toBe(joined(full.fresh.lines));
  expect(scan.fresh.state).toEqual(full.fresh.state);
  expect(scan.fresh.count).toBe(full.fresh.count);
  expect(scan.fresh.duplicates).toBe(0);
  expect(scan.fresh.conflicts).toEqual([]);
  return true;
}

describe('a first pull page checked on its bytes', () => {
  it('takes only what the full decode takes whole, with the same bytes, counts and tail state (any page, any damage)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.array(lineArb, { maxLength: 6 }), { minLength: 1, maxLength: 4 }), chainArb), fc.array(fc.constantFrom<Spoil>('none', 'none', 'sha', 'no-newline', 'not-utf8'), { maxLength: 4 }), (page, spoil) => {
        expectSameAsFull(batchesOf(page, spoil));
      }),
      { numRuns: 1000 },
    );
  });

  it('takes every clean chain (the usual first pull), names and message counts included', () => {
    fc.assert(
      fc.property(chainArb, (page) => {
        expect(expectSameAsFull(batchesOf(page))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('gives up on a chain whose body does not match its sha-256, or whose entries fork, repeat an id or loop to the root', () => {
    const chain = (ids: [number, number | null][]): Line[] => ids.map(([id, parent], t) => ({ id, parent, t, kind: 'message', text: 'x' }));
    const clean = [chain([[0, null], [1, 0]]), chain([[2, 1], [3, 2]])];
    expect(expectSameAsFull(batchesOf(clean))).toBe(true);
    expect(scanNewFile(batchesOf(clean, ['none', 'sha']))).toEqual({ shaChecked: 1 });
    expect(scanNewFile(batchesOf(clean, ['sha']))).toEqual({ shaChecked: 0 });
    expect(scanNewFile(batchesOf([chain([[0, null], [1, 0], [2, 0]])])).fresh).toBeUndefined(); // a fork
    expect(scanNewFile(batchesOf([chain([[0, null], [1, 0], [0, 1]])])).fresh).toBeUndefined(); // an id twice
    expect(scanNewFile(batchesOf([chain([[0, 1], [1, 0]])])).fresh).toBeUndefined(); // the root's parent in the page
  });
});
