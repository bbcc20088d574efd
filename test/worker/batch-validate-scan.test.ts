// The server's check of a plaintext batch with the line scan answers as the full check of every line does.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { validateBatch } from '../../worker/batch-validate.js';
import { LIMITS } from '../../shared/wire.js';

const msg = (id: string, parentId: string | null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi' }, ...extra });

/** One line of a body (its bytes, no '\n'): mostly good entries, and every kind of line the server refuses. */
const lineArb = (i: number): fc.Arbitrary<Buffer> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map((t) => Buffer.from(msg(`e${i}`, i ? `e${i - 1}` : null, { message: { role: 'assistant', content: [{ type: 'text', text: t }] } }))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null).slice(0, -1))) }, // not JSON
    { weight: 1, arbitrary: fc.constant(Buffer.from('')) }, // empty
    { weight: 1, arbitrary: fc.constant(Buffer.from(' \t')) }, // blank
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null) + msg(`f${i}`, null))) }, // two values
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null, { d: JSON.parse('['.repeat(70) + ']'.repeat(70)) }))) }, // too deep
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`bad id ${i}`, null))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null, { type: 'session' }))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null, { message: { content: 'no role' } }))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null).replace('"id"', '"\\u0069d"'))) }, // escaped key: fine, by the full check
    { weight: 1, arbitrary: fc.constant(Buffer.from(msg(`e${i}`, null) + '\r')) },
    { weight: 1, arbitrary: fc.constant(Buffer.concat([Buffer.from(msg(`e${i}`, null).slice(0, -2)), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])) }, // not UTF-8
    { weight: 1, arbitrary: fc.constant(Buffer.from('\ufeff' + msg(`e${i}`, null))) }, // a byte-order mark (stripped at the body's start)
  );

const bodyArb = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc.record({
    lines: fc.tuple(...Array.from({ length: n }, (_, i) => lineArb(i))),
    trailing: fc.constantFrom('\n', '', '\n\n'),
    countDelta: fc.constantFrom(0, 0, 0, 0, 1, -1),
  }),
);

/** What validateBatch answers: the size it returns, or the error it throws (code and message). */
async function answer(bytes: Uint8Array, entryCount: number, lineCheck: 'scan' | 'parse', parts?: Uint8Array[]): Promise<unknown> {
  const envelope = { session: 's', host: 'h', seq: 2, batchId: 'b', entryCount, sha256: createHash('sha256').update(bytes).digest('hex'), encoding: 'jsonl' as const };
  try {
    return { ok: await validateBatch('s', { envelope, body: parts ?? bytes, base64: false }, lineCheck) };
  } catch (e) {
    return { code: (e as { code?: string }).code, message: (e as Error).message };
  }
}

describe('validateBatch: the line scan against the full check', () => {
  it('property: the same answer (accepted with its size, or refused with the same code and message) for any body', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, async ({ lines, trailing, countDelta }) => {
        const bytes = new Uint8Array(Buffer.concat([Buffer.concat(lines.flatMap((l, i) => (i ? [Buffer.from('\n'), l] : [l]))), Buffer.from(trailing)]));
        const count = Math.max(1, lines.length + countDelta);
        expect(await answer(bytes, count, 'scan')).toEqual(await answer(bytes, count, 'parse'));
      }),
      { numRuns: 1_500 },
    );
  });

  it('property: a body in parts (as a frames push arrives, cut anywhere) gets the answer of the whole body', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.array(fc.nat(), { maxLength: 8 }), async ({ lines, trailing, countDelta }, cuts) => {
        const bytes = new Uint8Array(Buffer.concat([Buffer.concat(lines.flatMap((l, i) => (i ? [Buffer.from('\n'), l] : [l]))), Buffer.from(trailing)]));
        const at = [0, ...cuts.map((c) => c % (bytes.byteLength + 1)).sort((a, b) => a - b), bytes.byteLength];
        const parts = at.slice(1).map((end, i) => bytes.subarray(at[i]!, end));
        const count = Math.max(1, lines.length + countDelta);
        expect(await answer(bytes, count, 'scan', parts)).toEqual(await answer(bytes, count, 'parse'));
      }),
      { numRuns: 1_500 },
    );
    // A line over the entry limit that crosses parts is still too_large.
    const big = new Uint8Array(Buffer.from(msg('a', null, { pad: 'x'.repeat(LIMITS.maxEntryBytes) })));
    const cut = [big.subarray(0, 1000), big.subarray(1000, big.byteLength - 10), big.subarray(big.byteLength - 10)];
    expect(await answer(big, 1, 'scan', cut)).toMatchObject({ code: 'too_large' });
  });

  it('takes a body of good lines by the scan alone, and refuses a line over the entry limit as before', async () => {
    const good = new Uint8Array(Buffer.from([msg('a', null), msg('b', 'a')].join('\n') + '\n'));
    expect(await answer(good, 2, 'scan')).toEqual({ ok: good.byteLength });
    const big = new Uint8Array(Buffer.from(msg('a', null, { pad: 'x'.repeat(LIMITS.maxEntryBytes) })));
    const [scan, parse] = [await answer(big, 1, 'scan'), await answer(big, 1, 'parse')];
    expect(scan).toEqual(parse);
    expect(scan).toMatchObject({ code: 'too_large' });
  });
});
