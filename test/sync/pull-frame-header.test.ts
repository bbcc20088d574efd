// The direct check of pull frame headers: never accepts what the schemas refuse, gives what their parse gives, and is what readPullFrames uses.
import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { LIMITS, PullBatchFrameHeaderSchema, PullEndFrameHeaderSchema } from '../../shared/wire.js';
import { directBatchHeader, directEndHeader, parseBatchHeader, parseEndHeader } from '../../cli/sync/pull-frame-header.js';
import { readPullFrames } from '../../cli/sync/pull-frames.js';
import { concatChunks, encodeFrames } from '../../shared/batch-frames.js';

type Obj = Record<string, unknown>;

/** Sound: whatever the direct check accepts, the schema accepts, with the same value and the same JSON (key order too). */
function expectSound(h: Obj, direct: unknown, schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }): void {
  if (direct === null) return;
  const r = schema.safeParse(h);
  expect({ h, schema: r.success ? r.data : null }).toEqual({ h, schema: direct });
  expect(JSON.stringify(direct)).toBe(JSON.stringify(r.data));
}

const envelope = { session: 's-1', host: 'h_1', seq: 1, batchId: 'b1', entryCount: 3, sha256: 'a'.repeat(64), encoding: 'jsonl' };
const batch = { session: 's-1', envelope, received: 1_700_000_000_000, bytes: 10 };
const plainMeta = { session: 's-1', header: { type: 'session', id: 's-1', timestamp: 't', cwd: '/x' }, projectKey: 'github.com/a/b', cwd: '/x', name: 'n', created: 't', hosts: { h_1: 3 } };
const sealedMeta = { session: 's-1', sealed: { keyId: 'k1', wrappedKey: 'QUJD', ciphertext: 'QUJDRA==' }, projectKey: 'b'.repeat(64), created: 't', hosts: { h_1: 3, h_2: 1 } };
const end = { session: 's-1', ok: true, cursor: { h_1: 3 }, more: false, bytes: 0 };

/** Values that sit on and around each rule's edges. */
const anyValue = fc.oneof(
  fc.constantFrom<unknown>(0, 1, -1, 1.5, 2 ** 53, 999_999_999_999, 1_000_000_000_000, LIMITS.maxEntriesPerBatch, LIMITS.maxEntriesPerBatch + 1, NaN, null, true, false, '', 'a', '-a', 'a'.repeat(128), 'a'.repeat(129), 'a'.repeat(64), 'A'.repeat(64), 'x'.repeat(300), 'x'.repeat(301), 'jsonl', 'aes-256-gcm', 'QUJD', 'QUJ', [], {}, { a: 1 }, { h_1: 1 }, { h_1: -1 }, { '-h': 1 }, { h: 1.5 }),
  fc.string({ maxLength: 20 }),
  fc.integer(),
);

const KEYS = ['session', 'host', 'seq', 'batchId', 'entryCount', 'sha256', 'encoding', 'bytes', 'envelope', 'received', 'damaged', 'base64', 'ok', 'cursor', 'more', 'meta', 'header', 'projectKey', 'cwd', 'name', 'created', 'hosts', 'sealed', 'keyId', 'wrappedKey', 'ciphertext', 'h_1', 'extra', 'error'];

/** A header built from a valid one with random fields replaced, added or removed, at every level. */
function mutated(bases: Obj[], levels: string[]): fc.Arbitrary<Obj> {
  return fc
    .record({ base: fc.constantFrom(...bases), edits: fc.array(fc.tuple(fc.constantFrom(...levels), fc.constantFrom(...KEYS), fc.option(anyValue, { nil: undefined })), { maxLength: 4 }) })
    .map(({ base, edits }) => {
      const h = structuredClone(base) as Record<string, any>;
      for (const [where, key, value] of edits) {
        const target = where === 'top' ? h : where === 'meta' ? h.meta : where === 'sealed' ? h.meta?.sealed : h[where];
        if (typeof target !== 'object' || target === null || Array.isArray(target)) continue;
        if (value === undefined) delete target[key];
        // A copy: the constant objects of anyValue are shared by every run, and one set into itself (`{}` as meta,
        // then as meta's own field) would be a circle and would change the constant for the runs after.
        else target[key] = structuredClone(value);
      }
      // As the frame decoder hands it over: a JSON.parse of the header line.
      return JSON.parse(JSON.stringify(h)) as Obj;
    });
}

const batches = mutated([batch, { ...batch, damaged: 'unreadable', base64: true }, { envelope: { ...envelope, encoding: 'aes-256-gcm' }, session: 's-1', bytes: 0 }], ['top', 'envelope']);
const ends = mutated([end, { ...end, meta: plainMeta }, { ...end, more: true, meta: sealedMeta }, { session: 's-1', ok: false, error: { code: 'not_found', message: 'm' }, bytes: 0 }], ['top', 'cursor', 'meta', 'sealed', 'header', 'hosts']);

describe('the direct check of pull frame headers', () => {
  it('takes the headers the server sends and gives what the schemas give (keys in any order)', () => {
    const reversed = (o: Obj) => Object.fromEntries(Object.entries(o).reverse());
    for (const h of [batch, { ...batch, damaged: 'x', base64: true }, reversed({ ...batch, envelope: reversed(envelope) })]) {
      const parsed = JSON.parse(JSON.stringify(h)) as Obj;
      expect(directBatchHeader(parsed)).not.toBeNull();
      expectSound(parsed, directBatchHeader(parsed), PullBatchFrameHeaderSchema);
    }
    for (const h of [end, { ...end, meta: plainMeta }, { ...end, meta: sealedMeta }, reversed({ ...end, meta: reversed(plainMeta) })]) {
      const parsed = JSON.parse(JSON.stringify(h)) as Obj;
      expect(directEndHeader(parsed)).not.toBeNull();
      expectSound(parsed, directEndHeader(parsed), PullEndFrameHeaderSchema);
    }
  });

  it('is never certain of a header the schemas refuse (random edits at every level)', () => {
    fc.assert(fc.property(batches, (h) => expectSound(h, directBatchHeader(h), PullBatchFrameHeaderSchema)), { numRuns: 3000 });
    fc.assert(fc.property(ends, (h) => expectSound(h, directEndHeader(h), PullEndFrameHeaderSchema)), { numRuns: 3000 });
  });

  it('leaves the edges to the schemas, which word the error', () => {
    const refusedBatches = [
      { ...batch, envelope: { ...envelope, seq: 1_000_000_000_000 } },
      { ...batch, envelope: { ...envelope, extra: 1 } },
      { ...batch, session: '-x' },
      { ...batch, received: -1 },
      { ...batch, damaged: 'x'.repeat(301) },
      { ...batch, base64: false },
    ];
    for (const h of refusedBatches) {
      expect(directBatchHeader(h as Obj), JSON.stringify(h)).toBeNull();
      expect(parseBatchHeader(h as Obj).success, JSON.stringify(h)).toBe(false);
    }
    const refusedEnds = [
      { ...end, cursor: { '-h': 1 } },
      { ...end, cursor: { h: -1 } },
      { ...end, more: 'no' },
      { ...end, meta: { ...plainMeta, hosts: { h: 1.5 } } },
      { ...end, meta: { ...sealedMeta, sealed: { ...sealedMeta.sealed, wrappedKey: 'QUJ' } } },
      { ...end, meta: null },
    ];
    for (const h of refusedEnds) {
      expect(directEndHeader(h as Obj), JSON.stringify(h)).toBeNull();
      expect(parseEndHeader(h as Obj).success, JSON.stringify(h)).toBe(false);
    }
    // Not certain, but the schema's to take: an error end, and a key zod drops.
    expect(directEndHeader({ session: 's', ok: false, error: { code: 'c', message: 'm' } })).toBeNull();
    expect(parseEndHeader({ session: 's', ok: false, error: { code: 'c', message: 'm' } }).success).toBe(true);
    expect(parseBatchHeader({ ...batch, later: 1 }).success).toBe(true);
  });
});

describe('readPullFrames', () => {
  const answer = (frames: Obj[]) => concatChunks(encodeFrames(frames.map((header) => ({ header, body: new Uint8Array(0) }))));
  const s1 = { session: 's-1', envelope, received: 1_700_000_000_000 };

  it('reads the headers the server sends by the direct check alone, with what the schemas give', () => {
    const batchParse = vi.spyOn(PullBatchFrameHeaderSchema, 'safeParse');
    const endParse = vi.spyOn(PullEndFrameHeaderSchema, 'safeParse');
    try {
      const [item] = readPullFrames(answer([s1, { ...end, meta: plainMeta }]), ['s-1'], 'test');
      // zod costs a fresh pull of a thousand sessions tens of ms before it is warm: not asked when the check is certain.
      expect(batchParse).not.toHaveBeenCalled();
      expect(endParse).not.toHaveBeenCalled();
      const { session: _, ...want } = PullBatchFrameHeaderSchema.parse({ ...s1, bytes: 0 });
      expect(JSON.stringify(item)).toBe(JSON.stringify({ ...PullEndFrameHeaderSchema.parse({ ...end, meta: plainMeta }), batches: [{ ...want, body: new Uint8Array(0) }] }));
    } finally {
      batchParse.mockRestore();
      endParse.mockRestore();
    }
  });

  it('leaves what the direct check is not certain of to the schemas: taken as they take it, or refused as they word it', () => {
    const [item] = readPullFrames(answer([{ ...s1, later: 1 }, { ...end, later: 1 }]), ['s-1'], 'test');
    expect(item).toMatchObject({ ok: true, session: 's-1', batches: [{ envelope, received: 1_700_000_000_000 }] });
    expect(item && 'batches' in item ? Object.keys(item.batches[0]!) : []).not.toContain('later');
    expect(() => readPullFrames(answer([{ ...s1, received: -1 }, end]), ['s-1'], 'test')).toThrow(/frame 0 is not a pulled batch: received: /);
    expect(() => readPullFrames(answer([s1, { ...end, cursor: { h: -1 } }]), ['s-1'], 'test')).toThrow(/frame 1 is neither a pulled batch nor a session's end: cursor\.h: /);
  });
});
