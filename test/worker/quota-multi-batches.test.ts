// The account quota inside one POST /v1/batches over the file-system store: a counter to count again never stalls the group commit, and the batches of one request add up against maxBytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { keys } from '../../shared/keys.js';
import { PushBatchesResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(quota: Record<string, number>) {
  const dir = mkdtempSync(join(tmpdir(), 'sessync-quota-multi-'));
  dirs.push(dir);
  const store = new FsStore(dir);
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, quota)).status).toBe(200);
  return { store, account: a.account, client: new TestClient(f, a.token), admin };
}

/** The request, or a failure naming the hang: a group commit whose writes never flush answers nothing at all. */
function answered<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer in 15 s: the group commit stalled`)), 15_000);
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

const newSessions = (n: number, count = 3) => Promise.all(Array.from({ length: n }, (_, i) => makeBatch({ session: `s${i}`, host: 'h1', seq: 1, count, meta: metaFor(`s${i}`) })));

describe('POST /v1/batches with an account quota, file-system store', () => {
  for (const damage of ['missing', 'damaged'] as const) {
    it(`answers when the usage counter is ${damage} and has to be counted again, and saves the count`, async () => {
      const { store, account, client, admin } = await setup({ maxBytes: 10_000_000 });
      // Something already stored, so the recount has bytes to find.
      expect((await client.call('POST', '/v1/batches', { batches: await newSessions(1) })).status).toBe(200);
      const before = (await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes as number;
      expect(before).toBeGreaterThan(0);
      if (damage === 'missing') await store.delete(keys.usage(account));
      else await store.put(keys.usage(account), new TextEncoder().encode('not json'));

      const batches = (await newSessions(4)).slice(1).map((b, i) => ({ ...b, envelope: { ...b.envelope, session: `t${i}` }, meta: metaFor(`t${i}`) }));
      const r = await answered(client.call('POST', '/v1/batches', { batches }), `a ${batches.length}-batch push with a ${damage} counter`);
      expect(r.status, r.text).toBe(200);
      expect(PushBatchesResponseSchema.parse(r.json).results.every((x) => x.ok)).toBe(true);
      // The recount was saved at the request's end, with this request's bytes on top (the report reads the counter).
      const stored = await store.get(keys.usage(account));
      expect(stored).not.toBeNull();
      const saved = JSON.parse(new TextDecoder().decode(stored!.body)) as { bytes: number };
      expect(saved.bytes).toBeGreaterThan(before);
      expect((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes).toBe(saved.bytes);
    });
  }

  it('counts the batches of one request together against maxBytes: those past the limit are refused, the rest stored', async () => {
    const probe = await setup({ maxBytes: 10_000_000 });
    const one = await newSessions(1, 20);
    expect((await probe.client.call('POST', '/v1/batches', { batches: one })).status).toBe(200);
    const perBatch = (await probe.admin.call('GET', `/v1/admin/accounts/${probe.account}/quota`)).json.usage.bytes as number;
    expect(perBatch).toBeGreaterThan(0);

    // Room for one and a half batches of the same size: one request of four may store one, not four.
    const { account, client, admin } = await setup({ maxBytes: Math.floor(perBatch * 1.5) });
    const r = await answered(client.call('POST', '/v1/batches', { batches: await newSessions(4, 20) }), 'a 4-batch push');
    expect(r.status, r.text).toBe(200);
    const results = PushBatchesResponseSchema.parse(r.json).results;
    expect(results.filter((x) => x.ok)).toHaveLength(1);
    for (const x of results.filter((y) => !y.ok)) expect(x).toMatchObject({ ok: false, error: { code: 'too_large', message: expect.stringContaining('maxBytes') } });
    const usage = (await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes as number;
    expect(usage).toBe(perBatch);
    expect(usage).toBeLessThanOrEqual(Math.floor(perBatch * 1.5));
  });
});
