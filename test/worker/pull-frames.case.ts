// Pulls answered as frames on every store: raw bodies (JSONL, ciphertext unencoded), the sha-256 of the frame's bytes, an
// older server's base64 record flagged, the record's fields passed through, JSON unchanged for clients before frames.
// No node:* (it also runs in workerd).
import { beforeAll, describe, expect, it } from 'vitest';
import { concatChunks, encodeFrames, FRAMES_TYPE, type Frame } from '../../shared/batch-frames.js';
import { keys } from '../../shared/keys.js';
import { toBase64 } from '../../shared/sync-crypto.js';
import { PullResponseSchema, type PullPageItem, type PulledBatchIn } from '../../shared/wire.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { sha256Hex } from '../../worker/sha256.js';
import { readPullFrames } from '../../cli/sync/pull-frames.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from './routes-helpers.js';

export interface PullFramesTarget {
  fetcher: Fetcher;
  /** The store behind the service, to plant what an older server stored. */
  store: BlobStore;
  /** The service pulls one session per POST /v1/pulls (Workers). */
  oneSessionPerPull: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ACCEPT = { accept: `${FRAMES_TYPE}, application/json` };

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  crypto.getRandomValues(out);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
}

/** A raw request, so the test reads the answer's bytes and type as a client does. */
async function pullRaw(fetcher: Fetcher, token: string, path: string, body: unknown, accept = true): Promise<{ type: string; bytes: Uint8Array; length: string | null }> {
  const res = await fetcher.fetch(new Request(`http://sessync.test${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(accept ? ACCEPT : {}) }, body: JSON.stringify(body) }));
  expect(res.status).toBe(200);
  return { type: res.headers.get('content-type') ?? '', bytes: new Uint8Array(await res.arrayBuffer()), length: res.headers.get('content-length') };
}

export function describePullFrames(name: string, open: () => Promise<PullFramesTarget>): void {
  describe(`pull as frames [${name}]`, () => {
    let t: PullFramesTarget;
    let token: string;
    let account: string;
    let alice: TestClient;
    const session = 'pf-mixed';
    const jsonl = '{"type":"message","id":"pf-1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"caf\u00e9 \\u2028 \\"quoted\\""}}\n';
    const raw = randomBytes(28 + 200);
    const oldRaw = randomBytes(28 + 90);

    beforeAll(async () => {
      t = await open();
      ({ token, account } = await adminCreateAccount(t.fetcher, TEST_ADMIN_SECRET));
      alice = new TestClient(t.fetcher, token);
      // Host a: a JSONL batch; host b: a raw sealed one pushed as a frame; host c: a record as an older server stored it
      // (JSON, the ciphertext as base64 text, its sha-256 of that text); host d: an object that is no record at all.
      const a = await makeBatch({ session, host: 'a', seq: 1, meta: metaFor(session) });
      a.body = jsonl;
      a.envelope.entryCount = 1;
      a.envelope.sha256 = await sha256Hex(jsonl);
      expect((await alice.push(a)).status).toBe(201);
      const envB = { session, host: 'b', seq: 1, batchId: 'b-1', entryCount: 2, encoding: 'aes-256-gcm' as const, sha256: await sha256Hex(raw) };
      const frames: Frame[] = [{ header: { envelope: envB }, body: raw }];
      const pushed = await alice.call('POST', `/v1/sessions/${session}/batches`, concatChunks(encodeFrames(frames)), { 'content-type': FRAMES_TYPE });
      expect(pushed.status).toBe(201);
      const text = toBase64(oldRaw);
      const envC = { session, host: 'c', seq: 1, batchId: 'c-1', entryCount: 1, encoding: 'aes-256-gcm' as const, sha256: await sha256Hex(text) };
      await t.store.putIfAbsent(keys.batch(account, session, 'c', 1), encoder.encode(JSON.stringify({ envelope: envC, body: text })));
      await t.store.putIfAbsent(keys.head(account, session, 'c', 1), new Uint8Array(0));
      await t.store.putIfAbsent(keys.batch(account, session, 'd', 1), encoder.encode('not a record'));
      await t.store.putIfAbsent(keys.head(account, session, 'd', 1), new Uint8Array(0));
    });

    const byHost = (batches: PulledBatchIn[]) => new Map(batches.map((b) => [b.envelope.host, b]));

    it('serves each body raw with the sha-256 of its bytes; an older base64 record as stored, flagged; a damaged one as damaged', async () => {
      const r = await pullRaw(t.fetcher, token, `/v1/sessions/${session}/pull`, { cursor: {}, withMeta: true });
      expect(r.type).toBe(FRAMES_TYPE);
      // The answer is streamed as its chunks: the length it declares is the bytes that come.
      expect(r.length).toBe(String(r.bytes.byteLength));
      const page = readPullFrames(r.bytes, [session], 'test')[0]!;
      expect(page.ok).toBe(true);
      if (!page.ok) return;
      const b = byHost(page.batches);
      for (const h of ['a', 'b', 'c']) {
        const body = b.get(h)!.body as Uint8Array;
        expect(await sha256Hex(body), h).toBe(b.get(h)!.envelope.sha256);
      }
      expect(decoder.decode(b.get('a')!.body as Uint8Array)).toBe(jsonl);
      expect(b.get('a')!.base64).toBeUndefined();
      expect(sameBytes(b.get('b')!.body as Uint8Array, raw)).toBe(true);
      expect(b.get('b')!.base64).toBeUndefined();
      expect(b.get('c')!.base64).toBe(true);
      expect(decoder.decode(b.get('c')!.body as Uint8Array)).toBe(toBase64(oldRaw));
      expect(b.get('d')).toMatchObject({ damaged: expect.any(String), body: new Uint8Array(0) });
      // The stored record's own fields pass through: the time the server first stored it (none on the older record).
      expect(b.get('a')!.received).toEqual(expect.any(Number));
      expect(b.get('b')!.received).toEqual(expect.any(Number));
      expect(b.get('c')!.received).toBeUndefined();
      // Cursor, more and meta as the JSON answer has them.
      const json = PullResponseSchema.parse((await alice.call('POST', `/v1/sessions/${session}/pull`, { cursor: {}, withMeta: true })).json);
      expect({ cursor: page.cursor, more: page.more, meta: page.meta }).toEqual({ cursor: json.cursor, more: json.more, meta: json.meta });
      expect(page.meta?.session).toBe(session);
    });

    it('answers a client that does not ask for frames in JSON, as before (a raw sealed body as base64 with the sha-256 of that text)', async () => {
      const r = await alice.call('POST', `/v1/sessions/${session}/pull`, { cursor: {} });
      expect(r.status).toBe(200);
      const b = byHost(PullResponseSchema.parse(r.json).batches);
      expect(b.get('a')!.body).toBe(jsonl);
      expect(b.get('b')!.body).toBe(toBase64(raw));
      expect(b.get('b')!.envelope.sha256).toBe(await sha256Hex(toBase64(raw)));
      expect(b.get('c')!.body).toBe(toBase64(oldRaw));
    });

    it('POST /v1/pulls as frames: each session in request order, ended by its own frame; an error in its session\'s place', async () => {
      const sessions = t.oneSessionPerPull ? [session] : [session, 'pf-missing', 'pf-other'];
      if (!t.oneSessionPerPull) expect((await alice.push(await makeBatch({ session: 'pf-other', host: 'a', seq: 1, meta: metaFor('pf-other') }))).status).toBe(201);
      const r = await pullRaw(t.fetcher, token, '/v1/pulls', { sessions: sessions.map((s) => ({ session: s, cursor: {} })) });
      expect(r.type).toBe(FRAMES_TYPE);
      const items: PullPageItem[] = readPullFrames(r.bytes, sessions, 'test');
      expect(items.map((x) => x.session)).toEqual(sessions);
      expect(items[0]).toMatchObject({ ok: true, more: false, cursor: { a: 1, b: 1, c: 1, d: 1 } });
      expect(items[0]!.ok && items[0]!.batches).toHaveLength(4);
      if (t.oneSessionPerPull) return;
      expect(items[1]).toMatchObject({ ok: false, error: { code: 'not_found' } });
      expect(items[2]!.ok && items[2]!.batches.map((b) => b.envelope.host)).toEqual(['a']);
    });
  });
}
