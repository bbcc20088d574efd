// A push's read of a session file with the line scan gives the slice the full parse of every line gives, byte for byte.
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFirst, readSlice, type Slice } from '../../cli/sync/read-slice.js';

const dir = mkdtempSync(join(tmpdir(), 'sessync-read-slice-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header = JSON.stringify({ type: 'session', version: 3, id: 'sess-1', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' });
const msg = (id: string, parentId: string | null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi' }, ...extra });

/** One line of a file (its bytes, no '\n'), of every kind a push meets; `id` names it and `parent` the line before. */
const lineArb = (id: string, parent: string | null): fc.Arbitrary<Buffer> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map((t) => Buffer.from(msg(id, parent, { message: { role: 'assistant', content: [{ type: 'text', text: t }] } }))) },
    { weight: 2, arbitrary: fc.constant(Buffer.from(msg(id, 'elsewhere'))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, null))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from('{"type":"message","id":"' + id + '"')) }, // invalid JSON
    { weight: 1, arbitrary: fc.constant(Buffer.from('')) },
    { weight: 1, arbitrary: fc.constant(Buffer.from('  \t')) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, parent) + msg(id + '-b', id))) }, // two values on one line
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, parent, { d: JSON.parse('['.repeat(70) + ']'.repeat(70)) }))) }, // too deep
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`bad id ${id}`, parent))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, parent, { message: { content: 'no role' } }))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, parent).replace('"type"', '"\\u0074ype"'))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, parent) + '\r')) },
    { weight: 1, arbitrary: fc.constant(Buffer.concat([Buffer.from(msg(id, parent).slice(0, -2)), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])) }, // not UTF-8
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(id, parent, { n: 'ünïcødé €𝄞' }))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(JSON.stringify({ type: 'session', id: 'x', timestamp: 't', cwd: '/' }))) },
  );

const fileArb = fc.integer({ min: 0, max: 25 }).chain((n) =>
  fc.tuple(...Array.from({ length: n }, (_, i) => lineArb(`e${i}`, i === 0 ? null : `e${i - 1}`))).chain((lines) =>
    fc.record({ lines: fc.constant(lines), skip: fc.subarray(Array.from({ length: n }, (_, i) => `e${i}`), { maxLength: Math.min(3, n) }), torn: fc.boolean() }),
  ),
);

let files = 0;

/**
 * The slice without its mark that the body is valid UTF-8 (only the scan can tell, so only its slices have it), after
 * checking the mark holds: a body sent unchecked must be the bytes of its text.
 */
function unmarked(slice: Slice): Slice {
  const { rawUtf8, ...rest } = slice;
  if (rawUtf8) expect(isUtf8(slice.raw!)).toBe(true);
  return rest;
}

describe('readFirst and readSlice: the line scan against the full parse', () => {
  it('property: the same slice (entries, body bytes, skipped lines and reasons, chain), from the start and from any line; a body the scan marks valid UTF-8 is', async () => {
    await fc.assert(
      fc.asyncProperty(fileArb, async ({ lines, skip, torn }) => {
        const path = join(dir, `s${files++}.jsonl`);
        const parts = [Buffer.from(header + '\n'), ...lines.map((l) => Buffer.concat([l, Buffer.from('\n')]))];
        if (torn) parts.push(Buffer.from('{"type":"mess'));
        const bytes = Buffer.concat(parts);
        writeFileSync(path, bytes);
        const skipIds = new Set(skip);
        const first = readFirst(path, skipIds, 'scan');
        expect({ ...first, slice: unmarked(first.slice) }).toEqual(readFirst(path, skipIds, 'parse'));
        for (let at = 0, i = 0; i < parts.length - 1; i++) {
          at += parts[i]!.length;
          expect(unmarked(await readSlice(path, at, bytes.length, skipIds, 'scan'))).toEqual(await readSlice(path, at, bytes.length, skipIds, 'parse'));
        }
      }),
      { numRuns: 300 },
    );
  });
});
