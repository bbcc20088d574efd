// The account's maxBytes against the batches of one POST /v1/batches taken together: on the file-system store (group commit) and on a store without writeMany (an object store's path), room used by a batch that stores nothing goes back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { CountedStore } from '../../worker/store/counted-store.js';
import { countUsage } from '../../worker/quota.js';
import { PushBatchesResponseSchema, type PushBatchesItem } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The two ways a request's batches run: grouped (the file store has writeMany) and side by side (CountedStore has none, as R2 and S3). */
const STORES: { name: string; make: () => BlobStore }[] = [
  {
    name: 'file-system store',
    make: () => {
      const dir = mkdtempSync(join(tmpdir(), 'sessync-quota-total-'));
      dirs.push(dir);
      return new FsStore(dir);
    },
  },
  { name: 'memory store without writeMany', make: () => new CountedStore(new MemoryStore()) },
];

/** Batches of one size: every line's text is the same length whatever the session. */
const batchOf = (session: string, seq = 1) => makeBatch({ session, host: 'h1', seq, count: 20, ...(seq === 1 ? { meta: metaFor(session) } : {}) });

async function rig(make: () => BlobStore) {
  const store = make();
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  const client = new TestClient(f, a.token);
  const usage = async () => (await admin.call('GET', `/v1/admin/accounts/${a.account}/quota`)).json.usage.bytes as number;
  const setMax = async (maxBytes: number) => expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes })).status).toBe(200);
  const post = async (batches: unknown[]): Promise<PushBatchesItem[]> => {
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.status, r.text).toBe(200);
    return PushBatchesResponseSchema.parse(r.json).results;
  };
  return { store, account: a.account, client, usage, setMax, post };
}

/** The bytes one batch of batchOf counts for, measured on a store of its own. */
async function perBatch(make: () => BlobStore): Promise<number> {
  const probe = await rig(make);
  await probe.setMax(10_000_000);
  expect((await probe.post([await batchOf('probe')]))[0]!.ok).toBe(true);
  const n = await probe.usage();
  expect(n).toBeGreaterThan(0);
  return n;
}

const refusedForBytes = (x: PushBatchesItem) => !x.ok && x.error.code === 'too_large' && /maxBytes/.test(x.error.message);

for (const { name, make } of STORES) {
  describe(`maxBytes over one request's batches, ${name}`, () => {
    it('four batches that each fit but not together: one is stored, the others refused naming maxBytes, the usage stays within the limit', async () => {
      const size = await perBatch(make);
      const { store, account, usage, setMax, post } = await rig(make);
      await setMax(Math.floor(size * 1.5));
      const results = await post(await Promise.all(['a', 'b', 'c', 'd'].map((s) => batchOf(s))));
      expect(results.filter((x) => x.ok), JSON.stringify(results)).toHaveLength(1);
      expect(results.filter(refusedForBytes)).toHaveLength(3);
      expect(await usage()).toBe(size);
      expect((await countUsage(store, account)).bytes).toBe(size);
    });

    it('a batch resent in the same request (already stored) takes no room: of two new batches with room for one, one is stored', async () => {
      const size = await perBatch(make);
      const { usage, setMax, post } = await rig(make);
      await setMax(10_000_000);
      const first = await batchOf('first');
      expect((await post([first]))[0]!.ok).toBe(true);
      await setMax(Math.floor(size * 2.5));
      const results = await post([first, await batchOf('x'), await batchOf('y')]);
      expect(results[0]).toMatchObject({ ok: true, status: 'exists' });
      expect(results.slice(1).filter((x) => x.ok), JSON.stringify(results)).toHaveLength(1);
      expect(results.slice(1).filter(refusedForBytes)).toHaveLength(1);
      expect(await usage()).toBe(2 * size);
    });

    it('a batch refused before its write (a seq gap) takes no room: the one new batch with room for it is stored', async () => {
      const size = await perBatch(make);
      const { usage, setMax, post } = await rig(make);
      await setMax(Math.floor(size * 1.5));
      // Both run their checks together; the gap is found only after the quota's reads.
      const results = await post([await batchOf('gap', 3), await batchOf('fits')]);
      expect(results[0]).toMatchObject({ ok: false, error: { code: 'conflict' } });
      expect(results[1]).toMatchObject({ ok: true, status: 'created' });
      expect(await usage()).toBe(size);
    });
  });
}
