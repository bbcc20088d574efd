// Pushes as frames on every store: raw bodies stored as binary records, bad frames refused whole, JSON and frames mixed
// across an upgrade (old records, base64 resent raw), all pulled by a JSON client. No node:* (it also runs in workerd).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatChunks, encodeFrames, FRAMES_MAGIC, FRAMES_TYPE, type Frame } from '../../shared/batch-frames.js';
import { keys } from '../../shared/keys.js';
import { fromBase64, toBase64 } from '../../shared/sync-crypto.js';
import { LIMITS, PullResponseSchema, PushBatchesResponseSchema, type PushBatchRequest, type SessionMetaInput } from '../../shared/wire.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { decodeBatchRecord, isDamaged, type StoredBatchRecord } from '../../worker/session-data.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, storeSnapshot, type Fetcher } from './routes-helpers.js';

export interface PushFramesTarget {
  fetcher: Fetcher;
  /** The store behind the service, to read and plant records directly. */
  store: BlobStore;
  cleanup?: () => Promise<void> | void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A JSON push request as a frame: the same header without `body`, the body's UTF-8 as the frame's bytes. */
export function frameOf(req: PushBatchRequest): Frame {
  const { body, ...header } = req;
  return { header, body: encoder.encode(body) };
}

/** Random bytes standing for a sealed body (the server cannot tell them from ciphertext, and must not try). */
function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

/** A ciphertext batch as a raw frame (sha-256 of the raw bytes), and the same batch as an older client's JSON (base64, sha-256 of the text). */
async function sealedBatch(o: { session: string; host: string; seq: number; raw?: Uint8Array; meta?: SessionMetaInput; batchId?: string }): Promise<{ frame: Frame; json: PushBatchRequest; raw: Uint8Array }> {
  const raw = o.raw ?? randomBytes(28 + 300);
  const envelope = { session: o.session, host: o.host, seq: o.seq, batchId: o.batchId ?? `b-${o.host}-${o.seq}`, entryCount: 2, encoding: 'aes-256-gcm' as const };
  const text = toBase64(raw);
  const meta = o.meta ? { meta: o.meta } : {};
  return {
    frame: { header: { envelope: { ...envelope, sha256: await sha256Hex(raw) }, ...meta }, body: raw },
    json: { envelope: { ...envelope, sha256: await sha256Hex(text) }, body: text, ...meta },
    raw,
  };
}

function framesBody(frames: Frame[]): Uint8Array {
  return concatChunks(encodeFrames(frames));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
}

export function describePushFrames(name: string, open: () => Promise<PushFramesTarget>): void {
  describe(`push as frames [${name}]`, () => {
    let target: PushFramesTarget;
    const newAccount = async () => {
      const a = await adminCreateAccount(target.fetcher, TEST_ADMIN_SECRET);
      return { client: new TestClient(target.fetcher, a.token), account: a.account };
    };
    const sendFrames = (client: TestClient, body: Uint8Array, path = '/v1/batches') => client.call('POST', path, body, { 'content-type': FRAMES_TYPE });
    const record = async (key: string): Promise<StoredBatchRecord> => {
      const obj = await target.store.get(key);
      if (!obj) throw new Error(`${key} is not stored`);
      const b = decodeBatchRecord(obj.body);
      if (isDamaged(b)) throw new Error(`${key}: ${b.damaged}`);
      return b;
    };
    /** A JSON pull, checked as an older client checks it: every body hashes to its envelope's sha-256. */
    const pullJson = async (client: TestClient, session: string) => {
      const batches = PullResponseSchema.parse((await client.pull(session)).json).batches;
      for (const b of batches) expect(await sha256Hex(b.body), `${b.envelope.host}/${b.envelope.seq}`).toBe(b.envelope.sha256);
      return batches;
    };

    beforeAll(async () => {
      target = await open();
    });
    afterAll(async () => {
      await target?.cleanup?.();
    });

    it('stores jsonl and raw ciphertext frames as binary records of the bytes sent; the same frames again are all `exists`; a JSON pull serves both', async () => {
      const { client, account } = await newAccount();
      const plain = await makeBatch({ session: 'f1', host: 'h1', seq: 1, count: 3, meta: metaFor('f1') });
      // Bytes that JSON would have to escape or base64: a quote, a backslash, a newline, a zero byte.
      const sealed = await sealedBatch({ session: 'f2', host: 'h1', seq: 1, raw: new Uint8Array([...randomBytes(40), 0x22, 0x5c, 0x0a, 0x00]), meta: metaFor('f2') });
      const body = framesBody([frameOf(plain), sealed.frame]);
      const first = await sendFrames(client, body);
      expect(first.status, first.text).toBe(200);
      expect(PushBatchesResponseSchema.parse(first.json).results).toEqual([
        { ok: true, status: 'created', session: 'f1', host: 'h1', seq: 1 },
        { ok: true, status: 'created', session: 'f2', host: 'h1', seq: 1 },
      ]);
      const again = await sendFrames(client, body);
      expect(again.json.results.map((r: { status: string }) => r.status)).toEqual(['exists', 'exists']);

      const stored1 = await record(keys.batch(account, 'f1', 'h1', 1));
      expect(stored1).toMatchObject({ form: 'frames', base64: false, envelope: plain.envelope });
      expect(decoder.decode(stored1.body)).toBe(plain.body);
      const stored2 = await record(keys.batch(account, 'f2', 'h1', 1));
      expect(stored2).toMatchObject({ form: 'frames', base64: false, envelope: sealed.frame.header.envelope });
      expect(sameBytes(stored2.body, sealed.raw)).toBe(true);
      // The object is the magic line, one header line and the raw bytes: no JSON string, no base64 around the body.
      const obj = (await target.store.get(keys.batch(account, 'f2', 'h1', 1)))!.body;
      expect(decoder.decode(obj.subarray(0, FRAMES_MAGIC.length))).toBe(FRAMES_MAGIC);
      expect(sameBytes(obj.subarray(obj.byteLength - sealed.raw.byteLength), sealed.raw)).toBe(true);

      expect((await pullJson(client, 'f1')).map((b) => b.body)).toEqual([plain.body]);
      const [got] = await pullJson(client, 'f2');
      // An older client's view of a raw record: base64 text, the sha-256 of that text, the same bytes inside.
      expect(got!.envelope).toEqual(sealed.json.envelope);
      expect(sameBytes(fromBase64(got!.body), sealed.raw)).toBe(true);
    });

    it('POST /v1/sessions/:session/batches takes one frame (201, then 200 exists) and refuses two', async () => {
      const { client } = await newAccount();
      const b = await makeBatch({ session: 'one', host: 'h1', seq: 1, meta: metaFor('one') });
      const r = await sendFrames(client, framesBody([frameOf(b)]), '/v1/sessions/one/batches');
      expect(r.status, r.text).toBe(201);
      expect((await sendFrames(client, framesBody([frameOf(b)]), '/v1/sessions/one/batches')).json.status).toBe('exists');
      const two = await sendFrames(client, framesBody([frameOf(b), frameOf(await makeBatch({ session: 'one', host: 'h2', seq: 1 }))]), '/v1/sessions/one/batches');
      expect(two.status).toBe(400);
      expect(two.json.error.message).toMatch(/more than 1 frames/);
    });

    it('a frame whose header is not a push is that item\'s error; the other frames are stored', async () => {
      const { client } = await newAccount();
      const good = await makeBatch({ session: 'g1', host: 'h1', seq: 1, meta: metaFor('g1') });
      const r = await sendFrames(client, framesBody([{ header: { envelope: { session: 'g2' } }, body: encoder.encode('{}\n') }, frameOf(good), { header: { ...frameOf(good).header, extra: 1 }, body: new Uint8Array() }]));
      expect(r.status, r.text).toBe(200);
      const results = PushBatchesResponseSchema.parse(r.json).results;
      expect(results.map((x) => (x.ok ? x.status : x.error.code))).toEqual(['bad_input', 'created', 'bad_input']);
      expect(results[0]).toMatchObject({ error: { message: expect.stringMatching(/^push batches: frame 0: envelope/) } });
      expect(results[2]).toMatchObject({ error: { message: expect.stringMatching(/frame 2: .*extra/) } });
    });

    it('a frame over the batch limit is that item\'s too_large and stores nothing of it', async () => {
      const { client, account } = await newAccount();
      const good = await makeBatch({ session: 'z1', host: 'h1', seq: 1, meta: metaFor('z1') });
      const big = await sealedBatch({ session: 'z2', host: 'h1', seq: 1, raw: randomBytes(LIMITS.maxBatchBytes + 1), meta: metaFor('z2') });
      const r = await sendFrames(client, framesBody([frameOf(good), big.frame]));
      expect(r.status, r.text).toBe(200);
      expect(r.json.results.map((x: { ok: boolean; status?: string; error?: { code: string } }) => (x.ok ? x.status : x.error!.code))).toEqual(['created', 'too_large']);
      expect(await target.store.get(keys.batch(account, 'z2', 'h1', 1))).toBeNull();
    });

    describe('a malformed frames body is refused whole, before anything is stored', () => {
      const cases: { name: string; status: number; message: RegExp; body: (good: Uint8Array) => Uint8Array }[] = [
        { name: 'cut short inside a body', status: 400, message: /frames: frame 1 .*only \d+ follow/, body: (good) => good.subarray(0, good.byteLength - 5) },
        { name: 'a `bytes` larger than what follows', status: 400, message: /frames: frame 2 .*says 999 body bytes/, body: (good) => concatChunks([good, encoder.encode('{"envelope":{},"bytes":999}\nabc')]) },
        { name: 'a `bytes` smaller than the body (the rest read as a header)', status: 400, message: /frames: frame 3 .*not valid JSON/, body: (good) => concatChunks([good, encoder.encode('{"envelope":{},"bytes":1}\nabcdef\n')]) },
        { name: 'a negative `bytes`', status: 400, message: /"bytes" must be an integer >= 0/, body: (good) => concatChunks([good, encoder.encode('{"bytes":-3}\n')]) },
        { name: 'trailing garbage after the last frame', status: 400, message: /frames: frame 2 .*no newline/, body: (good) => concatChunks([good, encoder.encode('garbage')]) },
        { name: 'no magic line (JSON sent as frames)', status: 400, message: /does not start with the line "sessync-frames 1"/, body: () => encoder.encode('{"batches":[]}') },
        { name: 'no frames at all', status: 400, message: /holds no batch/, body: () => encoder.encode(FRAMES_MAGIC) },
        { name: 'more frames than a request takes', status: 400, message: /more than 256 frames/, body: () => concatChunks([encoder.encode(FRAMES_MAGIC), ...Array.from({ length: 257 }, () => encoder.encode('{"bytes":0}\n'))]) },
        { name: 'a body over the request limit', status: 413, message: /larger than \d+ bytes/, body: (good) => concatChunks([good, encoder.encode(`{"bytes":${LIMITS.maxRequestBytes}}\n`), new Uint8Array(LIMITS.maxRequestBytes)]) },
      ];
      for (const c of cases) {
        it(c.name, async () => {
          const { client, account } = await newAccount();
          // Two good frames first: none of them may be stored when the body as a whole is refused.
          const good = framesBody(await Promise.all(['m1', 'm2'].map(async (s) => frameOf(await makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) })))));
          const before = await storeSnapshot(target.store);
          const r = await sendFrames(client, c.body(good));
          expect(r.status, r.text).toBe(c.status);
          expect(r.json.error.message).toMatch(c.message);
          expect(await storeSnapshot(target.store)).toEqual(before);
          expect((await client.call('GET', '/v1/changes')).json.heads).toEqual([]);
          void account;
        });
      }
    });

    it('a sealed batch sent as base64 JSON (an older client) is `exists` when resent as a raw frame after the upgrade, and the reverse; other bytes are a conflict', async () => {
      const { client, account } = await newAccount();
      const a = await sealedBatch({ session: 'up', host: 'old', seq: 1, meta: metaFor('up') });
      expect((await client.push(a.json)).status).toBe(201);
      // Kept as sent: base64 text with the sha-256 of the text, flagged so.
      expect(await record(keys.batch(account, 'up', 'old', 1))).toMatchObject({ base64: true, envelope: a.json.envelope });
      const resent = await sendFrames(client, framesBody([a.frame]));
      expect(resent.json.results[0], resent.text).toMatchObject({ ok: true, status: 'exists' });
      expect((await sendFrames(client, framesBody([a.frame]), '/v1/sessions/up/batches')).json.status).toBe('exists');

      const b = await sealedBatch({ session: 'up', host: 'new', seq: 1, meta: metaFor('up') });
      expect((await sendFrames(client, framesBody([b.frame]))).json.results[0]).toMatchObject({ status: 'created' });
      expect((await client.push(b.json)).json.status).toBe('exists');
      expect((await client.call('POST', '/v1/batches', { batches: [b.json] })).json.results[0]).toMatchObject({ ok: true, status: 'exists' });

      // The same seq and batch id with other bytes, in either form: never taken as a retry.
      const other = await sealedBatch({ session: 'up', host: 'old', seq: 1 });
      expect((await sendFrames(client, framesBody([other.frame]))).json.results[0]).toMatchObject({ ok: false, error: { code: 'conflict' } });
      const otherB = await sealedBatch({ session: 'up', host: 'new', seq: 1 });
      expect((await client.push(otherB.json)).json.error.code).toBe('conflict');
      const pulled = await pullJson(client, 'up');
      expect(pulled.map((x) => sameBytes(fromBase64(x.body), x.envelope.host === 'old' ? a.raw : b.raw))).toEqual([true, true]);
    });

    it('a session of old JSON records and new binary ones pulls whole to a JSON client: bodies, hashes and ciphertext bytes as pushed', async () => {
      const { client, account } = await newAccount();
      const p1 = await makeBatch({ session: 'mix', host: 'h1', seq: 1, meta: metaFor('mix') });
      const s2 = await sealedBatch({ session: 'mix', host: 'h1', seq: 2 });
      expect((await client.push(p1)).status).toBe(201);
      expect((await client.push(s2.json)).status).toBe(201);
      // What a server from before frames left behind: the same two batches as JSON records.
      await target.store.put(keys.batch(account, 'mix', 'h1', 1), encoder.encode(JSON.stringify({ envelope: p1.envelope, body: p1.body })));
      await target.store.put(keys.batch(account, 'mix', 'h1', 2), encoder.encode(JSON.stringify({ envelope: s2.json.envelope, body: s2.json.body })));
      expect((await record(keys.batch(account, 'mix', 'h1', 2))).form).toBe('json');
      // Then the upgraded server and client: frames, stored binary.
      const s3 = await sealedBatch({ session: 'mix', host: 'h1', seq: 3 });
      const p4 = await makeBatch({ session: 'mix', host: 'h1', seq: 4 });
      const r = await sendFrames(client, framesBody([s3.frame]));
      expect(r.json.results[0], r.text).toMatchObject({ status: 'created' });
      expect((await sendFrames(client, framesBody([frameOf(p4)]))).json.results[0]).toMatchObject({ status: 'created' });
      // An old pending batch resent over an old record: still a retry.
      expect((await sendFrames(client, framesBody([s2.frame]))).json.results[0]).toMatchObject({ status: 'exists' });

      const pulled = await pullJson(client, 'mix');
      expect(pulled.map((b) => b.envelope.seq)).toEqual([1, 2, 3, 4]);
      expect(pulled[0]!.body).toBe(p1.body);
      expect(pulled[1]!.envelope).toEqual(s2.json.envelope);
      expect(sameBytes(fromBase64(pulled[1]!.body), s2.raw)).toBe(true);
      expect(sameBytes(fromBase64(pulled[2]!.body), s3.raw)).toBe(true);
      expect(pulled[3]!.body).toBe(p4.body);
    });
  });
}
