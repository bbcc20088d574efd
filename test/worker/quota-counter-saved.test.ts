// The quota's usage counter is saved by every request that changes what it should say or counts it again: pushes that store nothing, refused pushes, deletions cut short by a store failure, a batch whose head write failed.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobBody, BlobStore } from '../../worker/store/blob-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { countUsage } from '../../worker/quota.js';
import { batchBytes, listAll, readBatch } from '../../worker/session-data.js';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { DeleteSessionResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

/**
 * A real memory store with faults injected (a mock of a failing backend, nothing else faked): the next `failDeletes`
 * deletes of batch keys, after the first `deletesBeforeFail` succeed, and the next `failHeadWrites` writes of head
 * keys throw `unavailable`, as a store that cannot be reached does.
 */
class FaultyStore extends MemoryStore {
  deletesBeforeFail = 0;
  failDeletes = 0;
  failHeadWrites = 0;
  override async delete(key: string): Promise<void> {
    if (key.includes('/b/') && this.failDeletes > 0) {
      if (this.deletesBeforeFail > 0) this.deletesBeforeFail--;
      else {
        this.failDeletes--;
        throw new SessyncError('unavailable', `injected fault: delete ${key}`);
      }
    }
    return super.delete(key);
  }
  override async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    if (key.includes('/heads/') && this.failHeadWrites > 0) {
      this.failHeadWrites--;
      throw new SessyncError('unavailable', `injected fault: putIfAbsent ${key}`);
    }
    return super.putIfAbsent(key, body);
  }
}

async function rig(quota: Record<string, number> = { maxBytes: 10_000_000 }) {
  const store = new FaultyStore();
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, quota)).status).toBe(200);
  return { store, account: a.account, client: new TestClient(f, a.token) };
}

/** The counter as stored (null when there is none, 'damaged' when it does not parse): read without the report, which would save a recount itself. */
async function savedCounter(store: BlobStore, account: string): Promise<number | null | 'damaged'> {
  const obj = await store.get(keys.usage(account));
  if (!obj) return null;
  try {
    return (JSON.parse(new TextDecoder().decode(obj.body)) as { bytes: number }).bytes;
  } catch {
    return 'damaged'; // what the test damaged, reported as such: the assertions compare it with a number
  }
}

/** The bytes the quota counts for every batch stored under `prefix`, read one by one. */
async function storedBatchBytes(store: BlobStore, prefix: string): Promise<number> {
  let n = 0;
  for (const k of await listAll(store, prefix)) n += batchBytes(await readBatch(store, k));
  return n;
}

const damageCounter = (store: BlobStore, account: string) => store.put(keys.usage(account), new TextEncoder().encode('not json'));

describe('the usage counter, counted again, is saved by a push that stores nothing', () => {
  it('POST /v1/batches of batches all stored already (a resend), with a damaged counter', async () => {
    const { store, account, client } = await rig();
    const batches = await Promise.all(['r1', 'r2'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) })));
    expect((await client.call('POST', '/v1/batches', { batches })).status).toBe(200);
    await damageCounter(store, account);
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.json.results.map((x: { status?: string }) => x.status), r.text).toEqual(['exists', 'exists']);
    expect(await savedCounter(store, account)).toBe((await countUsage(store, account)).bytes);
  });

  it('the single route: a resend, and a batch refused over maxBytes, each with a missing counter', async () => {
    const { store, account, client } = await rig({ maxBytes: 3_000 });
    const first = await makeBatch({ session: 's1', host: 'h1', seq: 1, meta: metaFor('s1') });
    expect((await client.push(first)).status).toBe(201);
    await store.delete(keys.usage(account));
    expect((await client.push(first)).status).toBe(200);
    expect(await savedCounter(store, account)).toBe((await countUsage(store, account)).bytes);

    await store.delete(keys.usage(account));
    const big = await client.push(await makeBatch({ session: 's1', host: 'h1', seq: 2, count: 100 }));
    expect(big.status, big.text).toBe(413);
    expect(await savedCounter(store, account)).toBe((await countUsage(store, account)).bytes);
  });
});

describe('the usage counter after a deletion cut short', () => {
  it('a step whose batch deletes fail part way: the bytes of the batches it did delete are taken off, and the finished deletion leaves the counter exact', async () => {
    const { store, account, client } = await rig();
    for (let seq = 1; seq <= 12; seq++) expect((await client.push(await makeBatch({ session: 'gone', host: 'h1', seq, ...(seq === 1 ? { meta: metaFor('gone') } : {}) }))).status).toBe(201);
    expect((await client.push(await makeBatch({ session: 'kept', host: 'h1', seq: 1, meta: metaFor('kept') }))).status).toBe(201);
    expect(await savedCounter(store, account)).toBe((await countUsage(store, account)).bytes); // exact before the deletion
    const kept = await storedBatchBytes(store, `${keys.sessionPrefix(account, 'kept')}b/`);

    // The first step deletes some batches, then the store fails on one.
    store.deletesBeforeFail = 5;
    store.failDeletes = 1;
    const failed = await client.call('DELETE', '/v1/sessions/gone', { host: 'h1' });
    expect(failed.status, failed.text).toBe(503);
    // The session's heads went first, so countUsage no longer sees its batches: what is left of them is added by hand.
    const leftOfGone = await storedBatchBytes(store, `${keys.sessionPrefix(account, 'gone')}b/`);
    expect(leftOfGone).toBeGreaterThan(0);
    expect(await savedCounter(store, account)).toBe(kept + leftOfGone);

    for (let steps = 0; ; steps++) {
      const r = await client.call('DELETE', '/v1/sessions/gone', { host: 'h1' });
      expect(r.status, r.text).toBe(200);
      if (DeleteSessionResponseSchema.parse(r.json).complete) break;
      expect(steps).toBeLessThan(20);
    }
    expect(await storedBatchBytes(store, `${keys.sessionPrefix(account, 'gone')}b/`)).toBe(0);
    expect(await savedCounter(store, account)).toBe(kept);
  });
});

describe('the usage counter after a head write fails', () => {
  it('a batch stored before its head write failed is counted once: its retry answers exists and adds nothing', async () => {
    const { store, account, client } = await rig();
    const b = await makeBatch({ session: 'h', host: 'h1', seq: 1, meta: metaFor('h') });
    store.failHeadWrites = 1;
    expect((await client.push(b)).status).toBe(503);
    expect((await client.push(b)).status).toBe(200);
    expect(await savedCounter(store, account)).toBe((await countUsage(store, account)).bytes);
    expect((await countUsage(store, account)).bytes).toBeGreaterThan(0);
  });
});
