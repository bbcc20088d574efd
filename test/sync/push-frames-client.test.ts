// The client's frames sender against the real app in-process: raw bodies on the wire, JSON for a server that reads
// frames as JSON (what an older one does), and a sealed batch written down as base64 before the upgrade resent as `exists`.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { ApiClient } from '../../cli/api-client.js';
import { PushBatcher } from '../../cli/sync/push-batcher.js';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { keys } from '../../shared/keys.js';
import type { PushBatchItem } from '../../shared/wire.js';
import { decodeBatchRecord, isDamaged } from '../../worker/session-data.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from '../worker/routes-helpers.js';

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

/**
 * The real app as the client's fetch. `dropsFramesType`: a proxy in front of it that rewrites the frames media type to
 * JSON, so the server reads a frames body as JSON, exactly as a server from before frames reads it (and refuses it
 * with the same 400).
 */
async function rig(o: { dropsFramesType?: boolean } = {}) {
  const store = new MemoryStore();
  const target = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const { token, account } = await adminCreateAccount(target, TEST_ADMIN_SECRET);
  const sent: { path: string; type: string | null; bytes: number }[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const body = new Uint8Array(await req.arrayBuffer());
    const headers = new Headers(req.headers);
    if (o.dropsFramesType && headers.get('content-type') === FRAMES_TYPE) headers.set('content-type', 'application/json');
    sent.push({ path: new URL(req.url).pathname, type: req.headers.get('content-type'), bytes: body.byteLength });
    return target.fetch(new Request(req.url, { method: req.method, headers, body: req.method === 'GET' ? undefined : body }));
  }) as typeof fetch;
  return { api: new ApiClient({ url: 'http://sessync.test', token, fetch: fetchFn, retries: 0 }), store, account, sent, older: new TestClient(target, token) };
}

/** A sealed batch as this client now holds it: raw bytes, sha-256 of them. */
function rawSealed(session: string, seq: number, n = 3000): PushBatchItem & { body: Uint8Array } {
  const body = new Uint8Array(randomBytes(n));
  return { envelope: { session, host: 'h1', seq, batchId: `b-${session}-${seq}`, entryCount: 1, sha256: sha(body), encoding: 'aes-256-gcm' }, body, meta: metaFor(session) };
}

async function stored(store: MemoryStore, key: string) {
  const b = decodeBatchRecord((await store.get(key))!.body);
  if (isDamaged(b)) throw new Error(b.damaged);
  return b;
}

describe('pushing frames from the client', () => {
  it('sends raw sealed bytes as frames (no base64 on the wire), stored raw', async () => {
    const { api, store, account, sent } = await rig();
    const items = [rawSealed('c1', 1, 30_000), rawSealed('c2', 1, 30_000)];
    const r = await api.pushBatches(items);
    expect(r.results.map((x) => x.ok && x.status)).toEqual(['created', 'created']);
    expect(api.takesFrames).toBe(true);
    const push = sent.find((s) => s.path === '/v1/batches')!;
    expect(push.type).toBe(FRAMES_TYPE);
    // The bodies and small headers: base64 alone would have added 20,000 bytes.
    expect(push.bytes).toBeLessThan(60_000 + 2_000);
    const rec = await stored(store, keys.batch(account, 'c1', 'h1', 1));
    expect(rec.base64).toBe(false);
    expect(Buffer.from(rec.body).equals(Buffer.from(items[0]!.body))).toBe(true);
    expect((await api.pushBatch(items[0]!)).status).toBe('exists');
  });

  it('falls back to JSON once a server reads frames as JSON (as an older one does), and keeps to JSON after', async () => {
    const { api, store, account, sent } = await rig({ dropsFramesType: true });
    const sealed = rawSealed('o1', 1);
    const plain = await makeBatch({ session: 'o2', host: 'h1', seq: 1, meta: metaFor('o2') });
    const batcher = new PushBatcher(api);
    const out = await Promise.all([sealed, plain].map((r) => batcher.around(async () => {
      await null;
      return batcher.push(r);
    })));
    expect(out.map((o) => o.status)).toEqual(['created', 'created']);
    expect(api.takesFrames).toBe(false);
    expect(sent.filter((s) => s.path === '/v1/batches').map((s) => s.type)).toEqual([FRAMES_TYPE, 'application/json']);
    // The older server's view: base64 text with the sha-256 of the text, the same sealed bytes inside.
    const rec = await stored(store, keys.batch(account, 'o1', 'h1', 1));
    expect(rec.base64).toBe(true);
    expect(Buffer.from(Buffer.from(rec.body).toString('utf8'), 'base64').equals(Buffer.from(sealed.body))).toBe(true);
    expect(rec.envelope.sha256).toBe(sha(Buffer.from(rec.body)));
    // Later pushes go straight to JSON, and the same raw batch again is a retry.
    expect((await api.pushBatch(sealed)).status).toBe('exists');
    expect(sent.at(-1)).toMatchObject({ path: '/v1/sessions/o1/batches', type: 'application/json' });
  });

  it('a sealed batch written down as base64 before the upgrade, resent by frames, is `exists` and leaves the record as it was', async () => {
    const { api, store, account, sent, older } = await rig();
    const raw = new Uint8Array(randomBytes(500));
    const text = Buffer.from(raw).toString('base64');
    // What an older client sent and kept pending: base64 text, sha-256 of the text.
    const old: PushBatchItem = { envelope: { session: 'p1', host: 'h1', seq: 1, batchId: 'b-p1', entryCount: 1, sha256: sha(text), encoding: 'aes-256-gcm' }, body: text, meta: metaFor('p1') };
    // Sent by that client as JSON, and stored; its answer lost (a crash), so the batch stayed pending over the upgrade.
    expect((await older.push({ ...old, body: text })).status).toBe(201);
    const before = (await store.get(keys.batch(account, 'p1', 'h1', 1)))!.body;
    expect(await stored(store, keys.batch(account, 'p1', 'h1', 1))).toMatchObject({ base64: true, envelope: { sha256: sha(text) } });
    // The upgraded client resends it as a raw frame (sha-256 of the raw bytes), by both routes: a retry each time.
    expect((await api.pushBatches([old])).results[0]).toMatchObject({ ok: true, status: 'exists' });
    expect((await api.pushBatch(old)).status).toBe('exists');
    expect(sent.filter((s) => s.path !== '/v1/admin/accounts').every((s) => s.type === FRAMES_TYPE)).toBe(true);
    expect(Buffer.from((await store.get(keys.batch(account, 'p1', 'h1', 1)))!.body).equals(Buffer.from(before))).toBe(true);
  });

  it('a base64 pending body that no longer matches its sha-256 is refused before it is sent, failing only its own push', async () => {
    const { api, store, account } = await rig();
    const text = Buffer.from(randomBytes(300)).toString('base64');
    const changed = `${text.slice(0, 10)}${text[10] === 'A' ? 'B' : 'A'}${text.slice(11)}`;
    const bad: PushBatchItem = { envelope: { session: 'q1', host: 'h1', seq: 1, batchId: 'b-q1', entryCount: 1, sha256: sha(text), encoding: 'aes-256-gcm' }, body: changed, meta: metaFor('q1') };
    await expect(api.pushBatch(bad)).rejects.toMatchObject({ code: 'bad_input', message: expect.stringMatching(/does not match its sha-256/) });
    const batcher = new PushBatcher(api);
    const out = await Promise.allSettled([bad, rawSealed('q2', 1)].map((r) => batcher.around(async () => {
      await null;
      return batcher.push(r);
    })));
    expect(out[0]).toMatchObject({ status: 'rejected', reason: { code: 'bad_input' } });
    expect(out[1]).toMatchObject({ status: 'fulfilled', value: { status: 'created' } });
    expect(await store.get(keys.batch(account, 'q1', 'h1', 1))).toBeNull();
  });
});
