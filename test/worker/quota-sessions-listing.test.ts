// On Workers with a session quota, a push lists the account's heads only when one of its batches may be of a new session: pushes to existing sessions stay within budget however many heads the account has.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { CountingStore } from './counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { TOKEN_MARK_MAX_OPS } from '../../worker/tokens.js';
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';

const BUDGET = WORKERS_SUBREQUESTS - TOKEN_MARK_MAX_OPS;
/** Heads of sessions pushed before (written straight into the store: their batches do not matter here), over two list pages. */
const OLD_HEADS = 1500;

async function rig() {
  const store = new CountingStore(new MemoryStore());
  // BUCKET set: the app takes the Workers limits (the store is the real memory store, its calls counted).
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), { BUCKET: {} });
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  const client = new TestClient(f, a.token);
  expect((await client.call('GET', '/v1/changes')).status).toBe(200); // the token's mark of the day, made here
  const enc = new TextEncoder();
  for (let i = 0; i < OLD_HEADS; i++) await store.inner.put(keys.head(a.account, `old${String(i).padStart(5, '0')}`, 'h1', 1), enc.encode(JSON.stringify({ seq: 1, batchId: 'x' })));
  return { store, client, admin, account: a.account };
}

const accountListings = (calls: string[], account: string) => calls.filter((c) => c === `list ${keys.headsPrefix(account)}`);

describe('the session quota lists the account only for a batch that may be of a new session', () => {
  it('the most batches Workers take, each a later batch of an existing session: no listing of the account, inside the budget', async () => {
    const { store, client, admin, account } = await rig();
    const sessions = Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => `live${i}`);
    expect((await client.call('POST', '/v1/batches', { batches: await Promise.all(sessions.map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) }))) })).status).toBe(200);
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: OLD_HEADS + sessions.length, maxBytes: 1_000_000_000 })).status).toBe(200);
    const later = await Promise.all(sessions.map((s) => makeBatch({ session: s, host: 'h1', seq: 2 })));
    store.calls = [];
    const r = await client.call('POST', '/v1/batches', { batches: later });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results.map((x: { status?: string }) => x.status), r.text).toEqual(sessions.map(() => 'created'));
    expect(accountListings(store.calls, account), store.calls.join('\n')).toEqual([]);
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(BUDGET);
  });

  it('a second host pushing seq 1 of existing sessions (full): the session is not new, no listing of the account', async () => {
    const { store, client, admin, account } = await rig();
    expect((await client.push(await makeBatch({ session: 'shared', host: 'h1', seq: 1, meta: metaFor('shared') }))).status).toBe(201);
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: OLD_HEADS + 1 })).status).toBe(200);
    store.calls = [];
    const r = await client.call('POST', '/v1/batches', { batches: [await makeBatch({ session: 'shared', host: 'h2', seq: 1, meta: metaFor('shared') })] });
    expect(r.json.results[0], r.text).toMatchObject({ ok: true, status: 'created' });
    expect(accountListings(store.calls, account), store.calls.join('\n')).toEqual([]);
  });

  it('new sessions still count against maxSessions exactly: room for one, two new sessions and an existing one pushed; one new is refused', async () => {
    const { store, client, admin, account } = await rig();
    expect((await client.push(await makeBatch({ session: 'live', host: 'h1', seq: 1, meta: metaFor('live') }))).status).toBe(201);
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: OLD_HEADS + 2 })).status).toBe(200);
    const batches = [await makeBatch({ session: 'live', host: 'h1', seq: 2 }), ...(await Promise.all(['n1', 'n2'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) }))))];
    store.calls = [];
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.status, r.text).toBe(200);
    const results = r.json.results as { ok: boolean; status?: string; error?: { code: string; message: string } }[];
    expect(results[0]).toMatchObject({ ok: true, status: 'created' });
    expect(results.slice(1).filter((x) => x.ok)).toHaveLength(1);
    const refused = results.slice(1).filter((x) => !x.ok);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.error!.code).toBe('too_large');
    expect(refused[0]!.error!.message).toMatch(/maxSessions/);
    // The account's heads listed once for the request (two pages), shared by both new sessions.
    expect(accountListings(store.calls, account), store.calls.join('\n')).toHaveLength(2);
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(BUDGET);
  });
});
