// The direct check of push frame headers: never accepts what PushFrameHeaderSchema refuses, and gives what its parse gives.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LIMITS, PushFrameHeaderSchema } from '../../shared/wire.js';
import { directFrameHeader, parseFrameHeader } from '../../worker/frame-header.js';

/** The schema's answer as the push uses it: envelope and meta, or null when refused. */
function schemaOf(h: Record<string, unknown>): unknown {
  const r = PushFrameHeaderSchema.safeParse(h);
  if (!r.success) return null;
  return r.data.meta === undefined ? { envelope: r.data.envelope } : { envelope: r.data.envelope, meta: r.data.meta };
}

/** Sound: whatever the direct check accepts, the schema accepts, with the same value and the same JSON (key order too: it is stored). */
function expectSound(h: Record<string, unknown>): void {
  const direct = directFrameHeader(h);
  if (direct === null) return;
  const schema = schemaOf(h);
  expect({ h, schema }).toEqual({ h, schema: direct });
  expect(JSON.stringify(direct)).toBe(JSON.stringify(schema));
}

const envelope = { session: 's-1', host: 'h_1', seq: 1, batchId: 'b1', entryCount: 3, sha256: 'a'.repeat(64), encoding: 'jsonl' };
const plainMeta = { header: { type: 'session', id: 's-1', timestamp: 't', cwd: '/x' }, projectKey: 'github.com/a/b', name: 'n' };
const sealedMeta = { projectKey: 'b'.repeat(64), sealed: { keyId: 'k1', wrappedKey: 'QUJD', ciphertext: 'QUJDRA==' } };

/** Values that sit on and around each rule's edges. */
const anyValue = fc.oneof(
  fc.constantFrom<unknown>(0, 1, -1, 1.5, 2 ** 53, 999_999_999_999, 1_000_000_000_000, LIMITS.maxEntriesPerBatch, LIMITS.maxEntriesPerBatch + 1, NaN, null, true, '', 'a', '-a', 'a'.repeat(128), 'a'.repeat(129), 'a'.repeat(64), 'A'.repeat(64), 'jsonl', 'aes-256-gcm', 'base64', 'QUJD', 'QUJ', 'x'.repeat(1000), 'x'.repeat(1001), [], {}, { a: 1 }),
  fc.string({ maxLength: 20 }),
  fc.integer(),
);

/** A header built from the valid one with random fields replaced, added or removed, at every level. */
const mutated = fc
  .record({
    base: fc.constantFrom<'none' | 'plain' | 'sealed'>('none', 'plain', 'sealed'),
    edits: fc.array(fc.tuple(fc.constantFrom('top', 'envelope', 'meta', 'header', 'sealed'), fc.constantFrom('session', 'host', 'seq', 'batchId', 'entryCount', 'sha256', 'encoding', 'bytes', 'envelope', 'meta', 'header', 'projectKey', 'name', 'sealed', 'keyId', 'wrappedKey', 'ciphertext', 'extra', 'id'), fc.option(anyValue, { nil: undefined })), { maxLength: 4 }),
  })
  .map(({ base, edits }) => {
    const h: Record<string, any> = structuredClone({ envelope, bytes: 10, ...(base === 'plain' ? { meta: plainMeta } : base === 'sealed' ? { meta: sealedMeta } : {}) });
    for (const [where, key, value] of edits) {
      const target = where === 'top' ? h : where === 'envelope' ? h.envelope : where === 'meta' ? h.meta : where === 'header' ? h.meta?.header : h.meta?.sealed;
      if (typeof target !== 'object' || target === null || Array.isArray(target)) continue;
      if (value === undefined) delete target[key];
      else target[key] = structuredClone(value); // a copy: constant objects are shared by every run (one set into itself is a circle)
    }
    // As the frame decoder hands it over: a JSON.parse of the header line.
    return JSON.parse(JSON.stringify(h)) as Record<string, unknown>;
  });

describe('directFrameHeader', () => {
  it('takes the headers clients send (no meta, plaintext meta, sealed meta) and gives what the schema gives', () => {
    // The last one's keys in another order than the schema's: the stored record header follows the schema's order.
    const reversed = Object.fromEntries(Object.entries(envelope).reverse());
    const reversedMeta = { name: 'n', projectKey: 'p', header: plainMeta.header };
    for (const h of [{ envelope, bytes: 0 }, { envelope, meta: plainMeta, bytes: 5 }, { meta: sealedMeta, bytes: 7, envelope: { ...envelope, encoding: 'aes-256-gcm' } }, { bytes: 1, meta: reversedMeta, envelope: reversed }]) {
      const parsed = JSON.parse(JSON.stringify(h));
      expect(directFrameHeader(parsed)).not.toBeNull();
      expectSound(parsed);
    }
  });

  it('is never certain of a header the schema refuses (random edits at every level)', () => {
    fc.assert(fc.property(mutated, (h) => expectSound(h)), { numRuns: 3000 });
  });

  it('leaves the edges to the schema: out-of-range numbers, bad names, extra keys, a meta that is null', () => {
    const refused = [
      { envelope: { ...envelope, seq: 1_000_000_000_000 }, bytes: 0 },
      { envelope: { ...envelope, entryCount: LIMITS.maxEntriesPerBatch + 1 }, bytes: 0 },
      { envelope: { ...envelope, session: '-x' }, bytes: 0 },
      { envelope: { ...envelope, sha256: 'A'.repeat(64) }, bytes: 0 },
      { envelope: { ...envelope, extra: 1 }, bytes: 0 },
      { envelope, bytes: 2 ** 53 },
      { envelope, bytes: 0, meta: null },
      { envelope, bytes: 0, meta: { ...plainMeta, projectKey: '' } },
      { envelope, bytes: 0, meta: { ...sealedMeta, sealed: { ...sealedMeta.sealed, wrappedKey: 'QUJ' } } },
      { envelope, bytes: 0, meta: { ...sealedMeta, name: 'n' } },
    ];
    for (const h of refused) {
      expect(directFrameHeader(h as Record<string, unknown>), JSON.stringify(h)).toBeNull();
      expect(parseFrameHeader(h as Record<string, unknown>).ok, JSON.stringify(h)).toBe(false);
    }
  });
});
