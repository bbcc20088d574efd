// The account quota inside workerd on R2, through the Workers entry: the batches of one POST /v1/batches add up against maxBytes.
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { PushBatchesResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };
const admin = new TestClient(worker, TEST_ADMIN_SECRET);

/** Batches of one size: every line's text is the same length whatever the session. */
const batchOf = (session: string) => makeBatch({ session, host: 'h1', seq: 1, count: 20, meta: metaFor(session) });

async function account(maxBytes: number) {
  const a = await adminCreateAccount(worker, TEST_ADMIN_SECRET);
  expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes })).status).toBe(200);
  return { client: new TestClient(worker, a.token), usage: async () => (await admin.call('GET', `/v1/admin/accounts/${a.account}/quota`)).json.usage.bytes as number };
}

describe('maxBytes over one request in workerd on R2', () => {
  it('four batches that each fit but not together: one is stored, three refused naming maxBytes', async () => {
    const probe = await account(10_000_000);
    expect((await probe.client.call('POST', '/v1/batches', { batches: [await batchOf('probe')] })).status).toBe(200);
    const size = await probe.usage();
    expect(size).toBeGreaterThan(0);

    const { client, usage } = await account(Math.floor(size * 1.5));
    const r = await client.call('POST', '/v1/batches', { batches: await Promise.all(['a', 'b', 'c', 'd'].map(batchOf)) });
    expect(r.status, r.text).toBe(200);
    const results = PushBatchesResponseSchema.parse(r.json).results;
    expect(results.filter((x) => x.ok), r.text).toHaveLength(1);
    for (const x of results.filter((y) => !y.ok)) expect(x).toMatchObject({ ok: false, error: { code: 'too_large', message: expect.stringContaining('maxBytes') } });
    expect(await usage()).toBe(size);
  });
});
