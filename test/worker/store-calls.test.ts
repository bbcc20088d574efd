// Store calls per pushed batch, counted on the real app over a memory store (Workers allow 50 per request on the free
// plan), and the quota's usage counter kept exact by a request of many batches.
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { tempDir } from '../helpers/cli.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { CountingStore } from './counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';
import { makeSealedBatch, putAccountKey, sealedMeta } from './sealed-helpers.js';

/** Calls on the store made by the request of one account that `send` makes (the auth's token read included). */
async function callsOf(store: CountingStore, send: () => Promise<{ status: number; text: string }>, status = [200, 201]): Promise<string[]> {
  store.calls = [];
  const r = await send();
  expect(status, r.text).toContain(r.status);
  return store.calls;
}

async function rig(env: Record<string, unknown> = {}) {
  const store = new CountingStore(new MemoryStore());
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), env);
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const client = new TestClient(f, a.token);
  // A token's first use of the day records that day once: done here, so the counts below are every push's.
  expect((await client.call('GET', '/v1/changes')).status).toBe(200);
  return { store, client, admin: new TestClient(f, TEST_ADMIN_SECRET), account: a.account };
}

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

/** Calls per request the route makes before any batch: the token, the account key record. */
const PER_REQUEST = 2;

describe('store calls per pushed batch', () => {
  it('a new session\'s first batch with its plaintext meta: one listing of heads, no read of the meta it is about to write', async () => {
    const { store, client } = await rig();
    const calls = await callsOf(store, async () => client.push(await makeBatch({ session: 's1', host: 'h1', seq: 1, meta: metaFor('s1') })));
    // Heads, tombstone, quota; the batch, the meta, the head.
    expect(calls.filter((c) => c.startsWith('list ')), calls.join('\n')).toHaveLength(2);
    expect(calls.filter((c) => c.endsWith('/meta') && c.startsWith('get ')), calls.join('\n')).toHaveLength(0);
    expect(calls, calls.join('\n')).toHaveLength(PER_REQUEST + 6);
  });

  it('a later batch of a live session: one listing, one quota read, the batch, the head and the old head\'s removal', async () => {
    const { store, client } = await rig();
    expect((await client.push(await makeBatch({ session: 's1', host: 'h1', seq: 1, meta: metaFor('s1') }))).status).toBe(201);
    const calls = await callsOf(store, async () => client.push(await makeBatch({ session: 's1', host: 'h1', seq: 2 })));
    expect(calls, calls.join('\n')).toHaveLength(PER_REQUEST + 5);
  });

  it('a second host\'s first batch lists the session\'s heads once (the host limit and its own head from one listing)', async () => {
    const { store, client } = await rig();
    expect((await client.push(await makeBatch({ session: 's1', host: 'h1', seq: 1, meta: metaFor('s1') }))).status).toBe(201);
    const calls = await callsOf(store, async () => client.push(await makeBatch({ session: 's1', host: 'h2', seq: 1, meta: metaFor('s1') })));
    expect(calls.filter((c) => c.startsWith('list a/')), calls.join('\n')).toHaveLength(2); // the heads, the tombstone
  });

  it('with a session quota, a new session costs no extra listing of its heads', async () => {
    const { store, client, admin, account } = await rig();
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 5 })).status).toBe(200);
    const calls = await callsOf(store, async () => client.push(await makeBatch({ session: 's1', host: 'h1', seq: 1, meta: metaFor('s1') })));
    // The session's heads once, the tombstone, the account's heads (the session count).
    expect(calls.filter((c) => c.startsWith('list ')), calls.join('\n')).toHaveLength(3);
  });

  it('POST /v1/batches reads the quota once for all its batches', async () => {
    const { store, client } = await rig({ BUCKET: {} });
    const batches = await Promise.all(['m1', 'm2', 'm3', 'm4'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) })));
    const calls = await callsOf(store, () => client.call('POST', '/v1/batches', { batches }));
    expect(calls.filter((c) => c.endsWith('/quota')), calls.join('\n')).toHaveLength(1);
  });

  it('a full request of new sealed sessions (an encrypted account\'s first push) fits the Workers plan\'s 50 calls at the Workers cap', async () => {
    const { store, client } = await rig();
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    const n = WORKERS_MAX_BATCHES;
    const batches = await Promise.all(Array.from({ length: n }, (_, i) => makeSealedBatch({ session: `e${i}`, host: 'h1', seq: 1, meta: sealedMeta('k1') })));
    const calls = await callsOf(store, () => client.call('POST', '/v1/batches', { batches }));
    // Per batch: the meta (sealed: checked before the batch), the heads, the tombstone; the batch, the meta, the head.
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(PER_REQUEST + 1 + 6 * n);
    expect(calls.length).toBeLessThanOrEqual(WORKERS_SUBREQUESTS);
  });
});

describe.each([
  ['memory', async () => new MemoryStore()],
  ['file system (group commit)', async () => {
    const dir = tempDir('sessync-usage-');
    cleanups.push(dir.cleanup);
    const s = new FsStore(dir.dir);
    await s.open();
    return s;
  }],
])('the quota\'s usage counter under POST /v1/batches [%s]', (_name, open) => {
  it('counts every batch of a request once: the batches of one request do not overwrite each other\'s count', async () => {
    const f = appFetcher(createApp({ store: await open(), adminSecret: TEST_ADMIN_SECRET }));
    const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
    const client = new TestClient(f, a.token);
    const admin = new TestClient(f, TEST_ADMIN_SECRET);
    expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    const batches = await Promise.all(['u1', 'u2', 'u3', 'u4'].map((s, i) => makeBatch({ session: s, host: 'h1', seq: 1, count: 2 + i, meta: metaFor(s) })));
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.json.results.every((x: { ok: boolean }) => x.ok), r.text).toBe(true);
    const want = batches.reduce((n, b) => n + new TextEncoder().encode(b.body).length, 0);
    expect((await admin.call('GET', `/v1/admin/accounts/${a.account}/quota`)).json.usage.bytes).toBe(want);
    // The same request again stores nothing, and adds nothing.
    await client.call('POST', '/v1/batches', { batches });
    expect((await admin.call('GET', `/v1/admin/accounts/${a.account}/quota`)).json.usage.bytes).toBe(want);
  });
});

describe('the session quota under POST /v1/batches', () => {
  it('lists the account\'s heads once per request, and lets through only as many new sessions as the limit has room for', async () => {
    const { store, client, admin, account } = await rig({ BUCKET: {} });
    expect((await client.push(await makeBatch({ session: 'old', host: 'h1', seq: 1, meta: metaFor('old') }))).status).toBe(201);
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 3 })).status).toBe(200);
    const batches = await Promise.all(['q1', 'q2', 'q3', 'q4'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) })));
    const calls = await callsOf(store, () => client.call('POST', '/v1/batches', { batches }));
    expect(calls.filter((c) => /^list a\/[^/]+\/heads\/$/.test(c)), calls.join('\n')).toHaveLength(1);
    const r = (await client.call('GET', '/v1/changes')).json as { heads: { session: string }[] };
    // One session stored before, room for two more: two of the four are stored, the others refused with 413.
    expect(new Set(r.heads.map((h) => h.session)).size).toBe(3);
  });
});
