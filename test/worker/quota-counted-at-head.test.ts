// A batch counts once, when a head write makes it visible: batches stored before a failure or a kill are counted by the retry, never twice.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobBody, BlobStore } from '../../worker/store/blob-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { countUsage } from '../../worker/quota.js';
import { batchBytes, readBatch } from '../../worker/session-data.js';
import { keys } from '../../shared/keys.js';
import { SessyncError } from '../../shared/errors.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

/**
 * Mock of a failing backend over the real memory store: head writes can hang for ever (a process killed, a Workers
 * invocation cancelled, at that point); the next `failMeta` writes of `metaKey` throw; the next `loseBatchReply`
 * batch writes land and then throw (a reply lost).
 */
class FaultStore extends MemoryStore {
  hangHeads = false;
  failMeta = 0;
  loseBatchReply = 0;
  metaKey = '';
  override async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    if (this.hangHeads && key.includes('/heads/')) return new Promise(() => {});
    if (key === this.metaKey && this.failMeta > 0) {
      this.failMeta--;
      throw new SessyncError('unavailable', 'injected: meta write failed');
    }
    const r = await super.putIfAbsent(key, body);
    if (key.includes('/b/') && this.loseBatchReply > 0) {
      this.loseBatchReply--;
      throw new SessyncError('unavailable', 'injected: reply lost after the batch write');
    }
    return r;
  }
}

async function rig(maxBytes = 10_000_000) {
  const store = new FaultStore();
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes })).status).toBe(200);
  return { store, account: a.account, admin, client: new TestClient(f, a.token) };
}

async function saved(store: BlobStore, account: string): Promise<number | null> {
  const o = await store.get(keys.usage(account));
  return o ? (JSON.parse(new TextDecoder().decode(o.body)) as { bytes: number }).bytes : null;
}

/** Bytes of every batch record in the account, read one by one: the truth the counter must end at once all have heads. */
async function storedBytes(store: BlobStore, batchKeys: string[]): Promise<number> {
  let n = 0;
  for (const k of batchKeys) n += batchBytes(await readBatch(store, k));
  expect(n).toBeGreaterThan(0);
  return n;
}

/** Lets a request that will never answer run up to where it hangs. */
const settleHung = () => new Promise((r) => setTimeout(r, 30));

describe('a stored batch whose push failed is counted by its retry, once', () => {
  it('single route: the meta write beside the batch fails (503); the retry answers exists and counts the batch', async () => {
    const { store, account, client } = await rig();
    store.metaKey = keys.sessionMeta(account, 'm');
    store.failMeta = 1;
    const b = await makeBatch({ session: 'm', host: 'h1', seq: 1, meta: metaFor('m'), count: 20 });
    expect((await client.push(b)).status).toBe(503);
    expect(await store.get(keys.batch(account, 'm', 'h1', 1))).not.toBeNull();
    const r = await client.push(b);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('exists');
    const truth = await storedBytes(store, [keys.batch(account, 'm', 'h1', 1)]);
    expect(await saved(store, account)).toBe(truth);
    expect((await countUsage(store, account)).bytes).toBe(truth);
    // Another resend counts nothing more.
    expect((await client.push(b)).status).toBe(200);
    expect(await saved(store, account)).toBe(truth);
  });

  it('single route, seq 2: the batch write lands but its reply is lost (503); the retry counts it', async () => {
    const { store, account, client } = await rig();
    expect((await client.push(await makeBatch({ session: 'n', host: 'h1', seq: 1, meta: metaFor('n') }))).status).toBe(201);
    store.loseBatchReply = 1;
    const b = await makeBatch({ session: 'n', host: 'h1', seq: 2, count: 20 });
    expect((await client.push(b)).status).toBe(503);
    expect((await client.push(b)).status).toBe(200);
    const truth = await storedBytes(store, [keys.batch(account, 'n', 'h1', 1), keys.batch(account, 'n', 'h1', 2)]);
    expect(await saved(store, account)).toBe(truth);
    expect((await countUsage(store, account)).bytes).toBe(truth);
  });

  it('single route: a push that never gets past its head write (killed there); the retry counts the batch', async () => {
    const { store, account, client } = await rig();
    const b = await makeBatch({ session: 'x', host: 'h1', seq: 1, meta: metaFor('x'), count: 20 });
    store.hangHeads = true;
    void client.push(b); // never answers
    await settleHung();
    expect(await store.get(keys.batch(account, 'x', 'h1', 1))).not.toBeNull();
    expect(await saved(store, account)).toBe(0); // not visible yet, so not counted
    store.hangHeads = false;
    const r = await client.push(b);
    expect(r.status, r.text).toBe(200);
    const truth = await storedBytes(store, [keys.batch(account, 'x', 'h1', 1)]);
    expect(await saved(store, account)).toBe(truth);
    expect((await countUsage(store, account)).bytes).toBe(truth);
  });

  it('a recount between the kill and the retry leaves the headless batch out, so the retry counts it once, not twice', async () => {
    const { store, account, admin, client } = await rig();
    expect((await client.push(await makeBatch({ session: 'r', host: 'h1', seq: 1, meta: metaFor('r') }))).status).toBe(201);
    const b = await makeBatch({ session: 'r', host: 'h1', seq: 2, count: 20 });
    store.hangHeads = true;
    void client.push(b); // never answers
    await settleHung();
    store.hangHeads = false;
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    expect((await client.push(b)).status).toBe(200);
    const truth = await storedBytes(store, [keys.batch(account, 'r', 'h1', 1), keys.batch(account, 'r', 'h1', 2)]);
    expect(await saved(store, account)).toBe(truth);
  });

  it('POST /v1/batches: a batch of the request whose reply was lost is counted by the retried request', async () => {
    const { store, account, client } = await rig();
    const batches = await Promise.all(['p', 'q'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s), count: 20 })));
    store.loseBatchReply = 1;
    const first = await client.call('POST', '/v1/batches', { batches });
    expect(first.status).toBe(200);
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.json.results.every((x: { ok: boolean }) => x.ok)).toBe(true);
    const truth = await storedBytes(store, [keys.batch(account, 'p', 'h1', 1), keys.batch(account, 'q', 'h1', 1)]);
    expect(await saved(store, account)).toBe(truth);
    expect((await countUsage(store, account)).bytes).toBe(truth);
  });
});

describe('a resend of a stored batch whose head was lost takes no new room', () => {
  it('seq 1 stored before a kill, the account filled since: the resend is stored (200), not refused 413, and counted', async () => {
    const { store, account, admin, client } = await rig();
    const probe = await makeBatch({ session: 'x', host: 'h1', seq: 1, meta: metaFor('x'), count: 20 });
    store.hangHeads = true;
    void client.push(probe); // never answers
    await settleHung();
    store.hangHeads = false;
    expect((await client.push(await makeBatch({ session: 'y', host: 'h1', seq: 1, meta: metaFor('y'), count: 20 }))).status).toBe(201);
    const used = (await saved(store, account))!;
    // Room for nothing more: x's batch is on the disk already, so its resend needs none.
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: used + 10 })).status).toBe(200);
    const fresh = await makeBatch({ session: 'z', host: 'h1', seq: 1, meta: metaFor('z'), count: 20 });
    expect((await client.push(fresh)).status).toBe(413); // a new batch is still refused
    const r = await client.push(probe);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('exists');
    const truth = await storedBytes(store, [keys.batch(account, 'x', 'h1', 1), keys.batch(account, 'y', 'h1', 1)]);
    expect(await saved(store, account)).toBe(truth);
    expect((await countUsage(store, account)).bytes).toBe(truth);
  });

  it('a different batch at the stored seq is still refused for room, not let through as a resend', async () => {
    const { store, account, admin, client } = await rig();
    const probe = await makeBatch({ session: 'x', host: 'h1', seq: 1, meta: metaFor('x'), count: 20 });
    store.hangHeads = true;
    void client.push(probe);
    await settleHung();
    store.hangHeads = false;
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10 })).status).toBe(200);
    const other = await makeBatch({ session: 'x', host: 'h1', seq: 1, meta: metaFor('x'), count: 21 });
    const r = await client.push(other);
    expect(r.status, r.text).toBe(413);
    expect(await saved(store, account)).toBe(0);
  });
});
