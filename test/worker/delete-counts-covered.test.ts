// Deleting a session takes off the usage counter only the bytes it counted: the batches a head covered, not one stored without a head (never added); a batch left pending is settled first.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobBody, BlobStore } from '../../worker/store/blob-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { countUsage } from '../../worker/quota.js';
import { batchBytes, readBatch } from '../../worker/session-data.js';
import { keys } from '../../shared/keys.js';
import { SessyncError } from '../../shared/errors.js';
import { DeleteSessionResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

/**
 * Mock of a failing backend over the real memory store: while `hangHeads` is set head writes never finish (a push
 * killed before its head landed); the next `loseHeadReplies` head writes land, then throw (a reply lost).
 */
class HeadFaultStore extends MemoryStore {
  hangHeads = false;
  loseHeadReplies = 0;
  override async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    if (!key.includes('/heads/')) return super.putIfAbsent(key, body);
    if (this.hangHeads) return new Promise(() => {});
    const r = await super.putIfAbsent(key, body);
    if (this.loseHeadReplies > 0) {
      this.loseHeadReplies--;
      throw new SessyncError('unavailable', 'injected: reply lost after the head write');
    }
    return r;
  }
}

async function rig() {
  const store = new HeadFaultStore();
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  expect((await new TestClient(f, TEST_ADMIN_SECRET).call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
  return { store, account: a.account, client: new TestClient(f, a.token) };
}

async function saved(store: BlobStore, account: string): Promise<number | null> {
  const o = await store.get(keys.usage(account));
  return o ? (JSON.parse(new TextDecoder().decode(o.body)) as { bytes: number }).bytes : null;
}

async function deleteAll(client: TestClient, session: string): Promise<void> {
  for (let steps = 0; ; steps++) {
    const r = await client.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
    expect(r.status, r.text).toBe(200);
    if (DeleteSessionResponseSchema.parse(r.json).complete) return;
    expect(steps).toBeLessThan(20);
  }
}

const settleHung = () => new Promise((r) => setTimeout(r, 30));

describe('deleting a session takes off what the counter holds of it', () => {
  it('a batch stored without a head (its push killed before the head write) is not taken off: the counter stays at the kept session', async () => {
    const { store, account, client } = await rig();
    expect((await client.push(await makeBatch({ session: 'kept', host: 'h1', seq: 1, meta: metaFor('kept'), count: 30 }))).status).toBe(201);
    for (const seq of [1, 2]) expect((await client.push(await makeBatch({ session: 'gone', host: 'h1', seq, ...(seq === 1 ? { meta: metaFor('gone') } : {}) }))).status).toBe(201);
    store.hangHeads = true;
    void client.push(await makeBatch({ session: 'gone', host: 'h1', seq: 3, count: 20 })); // killed before its head
    await settleHung();
    store.hangHeads = false;
    expect(await readBatch(store, keys.batch(account, 'gone', 'h1', 3))).not.toBeNull();
    const kept = batchBytes(await readBatch(store, keys.batch(account, 'kept', 'h1', 1)));
    expect(await saved(store, account)).toBe((await countUsage(store, account)).bytes);
    await deleteAll(client, 'gone');
    expect((await countUsage(store, account)).bytes).toBe(kept);
    expect(await saved(store, account)).toBe(kept);
  });

  it('a batch whose head landed with its reply lost (still pending) is settled, not taken off twice', async () => {
    const { store, account, client } = await rig();
    expect((await client.push(await makeBatch({ session: 'kept', host: 'h1', seq: 1, meta: metaFor('kept'), count: 30 }))).status).toBe(201);
    expect((await client.push(await makeBatch({ session: 'gone', host: 'h1', seq: 1, meta: metaFor('gone') }))).status).toBe(201);
    store.loseHeadReplies = 1;
    expect((await client.push(await makeBatch({ session: 'gone', host: 'h1', seq: 2, count: 20 }))).status).toBe(503);
    const kept = batchBytes(await readBatch(store, keys.batch(account, 'kept', 'h1', 1)));
    await deleteAll(client, 'gone');
    expect((await countUsage(store, account)).bytes).toBe(kept);
    expect(await saved(store, account)).toBe(kept);
  });
});
