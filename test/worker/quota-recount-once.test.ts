// A push on an account whose usage counter is damaged counts the account once, not again when it saves the count.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { countUsage } from '../../worker/quota.js';
import { keys } from '../../shared/keys.js';
import { CountingStore } from './counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { TOKEN_MARK_MAX_OPS } from '../../worker/tokens.js';

describe('recount of a damaged counter, once per request', () => {
  it('POST /v1/batches on Workers with 30 batches stored: each stored batch read once, within the budget, counter exact after', async () => {
    const store = new CountingStore(new MemoryStore());
    // BUCKET set: the app takes the Workers limits (the store itself is the real memory store, counted).
    const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), { BUCKET: {} });
    const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
    const admin = new TestClient(f, TEST_ADMIN_SECRET);
    const client = new TestClient(f, a.token);
    for (let seq = 1; seq <= 30; seq++) expect((await client.push(await makeBatch({ session: 's', host: 'h1', seq, ...(seq === 1 ? { meta: metaFor('s') } : {}) }))).status).toBe(201);
    expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    await store.put(keys.usage(a.account), new TextEncoder().encode('not json'));
    const b = await makeBatch({ session: 't', host: 'h1', seq: 1, meta: metaFor('t') });
    store.calls = [];
    const r = await client.call('POST', '/v1/batches', { batches: [b] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results[0].status).toBe('created');
    const batchReads = store.calls.filter((c) => c.startsWith('get ') && c.includes(keys.batchPrefix(a.account, 's', 'h1')));
    expect(batchReads.length).toBe(30);
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(WORKERS_SUBREQUESTS - TOKEN_MARK_MAX_OPS);
    const saved = JSON.parse(new TextDecoder().decode((await store.get(keys.usage(a.account)))!.body)) as { bytes: number };
    expect(saved.bytes).toBe((await countUsage(store, a.account)).bytes);
  });
});
