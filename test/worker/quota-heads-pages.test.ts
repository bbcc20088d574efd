// On Workers, a session quota's listing of many heads counts against a push request's storage calls: fewer batches fit.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { CountingStore } from './counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher } from './routes-helpers.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { TOKEN_MARK_MAX_OPS } from '../../worker/tokens.js';
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';
import { makeSealedBatch, putAccountKey, sealedMeta } from './sealed-helpers.js';

describe('session heads listed over several pages', () => {
  it('4,500 heads, maxSessions set: six new sessions are refused whole naming the batches that fit; that many fit the budget', async () => {
    const store = new CountingStore(new MemoryStore());
    // BUCKET set: the app takes the Workers limits (the store is the real memory store, its calls counted).
    const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), { BUCKET: {} });
    const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
    const admin = new TestClient(f, TEST_ADMIN_SECRET);
    const client = new TestClient(f, a.token);
    expect((await client.call('GET', '/v1/changes')).status).toBe(200);
    // Heads written straight into the store, as earlier pushes would have left them (their batches do not matter here).
    const enc = new TextEncoder();
    for (let i = 0; i < 4500; i++) await store.inner.put(keys.head(a.account, `old${String(i).padStart(5, '0')}`, 'h1', 1), enc.encode(JSON.stringify({ seq: 1, batchId: 'x' })));
    expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxSessions: 5000, maxBytes: 1_000_000_000 })).status).toBe(200);
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    const batches = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => makeSealedBatch({ session: `new${i}`, host: 'h1', seq: 1, meta: sealedMeta('k1') })));
    const budget = WORKERS_SUBREQUESTS - TOKEN_MARK_MAX_OPS;

    store.calls = [];
    const all = await client.call('POST', '/v1/batches', { batches });
    expect(all.status, all.text).toBe(413);
    const fit = all.json.error.details.maxBatches as number;
    expect(fit).toBeGreaterThanOrEqual(1);
    expect(fit).toBeLessThan(WORKERS_MAX_BATCHES);
    expect(store.calls.filter((c) => c.startsWith('putIfAbsent') || c.startsWith('put ')).length).toBe(0); // nothing stored
    expect(store.calls.length).toBeLessThanOrEqual(budget);

    store.calls = [];
    const some = await client.call('POST', '/v1/batches', { batches: batches.slice(0, fit) });
    expect(some.status, some.text).toBe(200);
    expect(some.json.results.map((x: { status?: string }) => x.status)).toEqual(Array(fit).fill('created'));
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(budget);
  });
});
