// A head write that lands but reports failure, or a kill after it, still counts its batch once: the pending marker in the usage counter names it, and the next request settles it.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobBody, BlobStore, BlobWrite } from '../../worker/store/blob-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { countUsage } from '../../worker/quota.js';
import { keys } from '../../shared/keys.js';
import { SessyncError } from '../../shared/errors.js';
import { PENDING_STALE_MS } from '../../worker/quota-pending.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { TOKEN_MARK_MAX_OPS } from '../../worker/tokens.js';
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';
import { CountingStore } from './counting-store.js';
import { makeSealedBatch, putAccountKey, sealedMeta } from './sealed-helpers.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const isHead = (key: string) => key.includes('/heads/');
const isUsage = (key: string) => key.endsWith('/usage');

/**
 * Mock of a failing backend over the real memory store. `headReply`: the next head write lands, then reports
 * `lost` (throws, a reply lost) or `false` (putIfAbsent says the key was there: the SDK's resend of a PUT whose
 * first try landed). `hangUsageAfterHead`: once a head has landed, counter writes never finish (a kill between the
 * head write and the request's counter write). `group`: a writeMany (one group flush) that throws after its writes
 * land when it holds a head.
 */
class LostHeadStore extends MemoryStore {
  headReply: 'lost' | 'false' | null = null;
  hangUsageAfterHead = false;
  headLanded = false;
  failGroupWithHead = false;
  override async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    const r = await super.putIfAbsent(key, body);
    if (isHead(key) && r) this.headLanded = true;
    if (isHead(key) && this.headReply) {
      const how = this.headReply;
      this.headReply = null;
      if (how === 'lost') throw new SessyncError('unavailable', 'injected: reply lost after the head write');
      return false;
    }
    return r;
  }
  override async put(key: string, body: BlobBody): Promise<void> {
    if (isUsage(key) && this.hangUsageAfterHead && this.headLanded) return new Promise(() => {});
    return super.put(key, body);
  }
}

/** The same, with a group write: every write of the group lands, then the group throws if it held a head. */
class LostGroupStore extends LostHeadStore {
  async writeMany(writes: readonly BlobWrite[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const w of writes) {
      if (w.replace) {
        await super.put(w.key, w.body);
        out.push(true);
      } else out.push(await MemoryStore.prototype.putIfAbsent.call(this, w.key, w.body));
    }
    if (this.failGroupWithHead && writes.some((w) => isHead(w.key))) {
      this.failGroupWithHead = false;
      throw new SessyncError('unavailable', 'injected: group flush failed after its writes landed');
    }
    return out;
  }
}

async function rig(store: BlobStore, env: Record<string, unknown> = {}) {
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), env);
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
  return { account: a.account, client: new TestClient(f, a.token), admin };
}

interface StoredCounter {
  bytes: number;
  pending?: { session: string; at: number }[];
}

async function counter(store: BlobStore, account: string): Promise<StoredCounter | null> {
  const o = await store.get(keys.usage(account));
  return o ? (JSON.parse(new TextDecoder().decode(o.body)) as StoredCounter) : null;
}

async function saved(store: BlobStore, account: string): Promise<number | null> {
  return (await counter(store, account))?.bytes ?? null;
}

/** The counter equals a fresh count of what the heads cover, which is more than nothing. */
async function exact(store: BlobStore, account: string): Promise<void> {
  const truth = (await countUsage(store, account)).bytes;
  expect(truth).toBeGreaterThan(0);
  expect(await saved(store, account)).toBe(truth);
}

const settleHung = () => new Promise((r) => setTimeout(r, 30));

describe('a head write that lands but reports failure counts its batch once', () => {
  it('single route: the head write lands, its reply is lost (503); the retry finds the head and the batch is counted', async () => {
    const store = new LostHeadStore();
    const { account, client } = await rig(store);
    const b = await makeBatch({ session: 'a', host: 'h1', seq: 1, meta: metaFor('a'), count: 20 });
    store.headReply = 'lost';
    expect((await client.push(b)).status).toBe(503);
    expect((await client.push(b)).status).toBe(200);
    await exact(store, account);
    expect((await client.push(b)).status).toBe(200); // a further resend adds nothing
    await exact(store, account);
  });

  it('single route, seq 2: the head putIfAbsent lands and then answers false (a resent PUT); counted once', async () => {
    const store = new LostHeadStore();
    const { account, client } = await rig(store);
    expect((await client.push(await makeBatch({ session: 'b', host: 'h1', seq: 1, meta: metaFor('b') }))).status).toBe(201);
    const b = await makeBatch({ session: 'b', host: 'h1', seq: 2, count: 20 });
    store.headReply = 'false';
    const r = await client.push(b);
    expect([200, 201], r.text).toContain(r.status);
    await exact(store, account);
    expect((await client.push(b)).status).toBe(200);
    await exact(store, account);
  });

  it('POST /v1/batches: a head reply lost among the batches of a request; the next request counts it', async () => {
    const store = new LostHeadStore();
    const { account, client } = await rig(store);
    const batches = await Promise.all(['p', 'q', 'r'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s), count: 20 })));
    store.headReply = 'lost';
    expect((await client.call('POST', '/v1/batches', { batches })).status).toBe(200);
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.json.results.every((x: { ok: boolean }) => x.ok), r.text).toBe(true);
    await exact(store, account);
  });

  it('a group flush that throws after its head writes landed: the retried request counts every batch once', async () => {
    const store = new LostGroupStore();
    const { account, client } = await rig(store);
    const batches = await Promise.all(['g1', 'g2', 'g3'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s), count: 20 })));
    store.failGroupWithHead = true;
    const first = await client.call('POST', '/v1/batches', { batches });
    expect(first.status).toBe(200);
    expect(first.json.results.some((x: { ok: boolean }) => !x.ok), first.text).toBe(true);
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.json.results.every((x: { ok: boolean }) => x.ok), r.text).toBe(true);
    await exact(store, account);
  });
});

describe('a kill between the head write and the counter write', () => {
  it('single route: killed after its head landed; the retry (which finds the head) counts the batch once', async () => {
    const store = new LostHeadStore();
    const { account, client } = await rig(store);
    expect((await client.push(await makeBatch({ session: 'k', host: 'h1', seq: 1, meta: metaFor('k') }))).status).toBe(201);
    const b = await makeBatch({ session: 'k', host: 'h1', seq: 2, count: 20 });
    store.headLanded = false;
    store.hangUsageAfterHead = true;
    void client.push(b); // never answers
    await settleHung();
    expect(store.headLanded).toBe(true);
    store.hangUsageAfterHead = false;
    expect((await client.push(b)).status).toBe(200);
    await exact(store, account);
  });

  it('POST /v1/batches: killed after its heads landed; a push of another session counts them once', async () => {
    const store = new LostHeadStore();
    const { account, client } = await rig(store);
    const batches = await Promise.all(['m', 'n'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s), count: 20 })));
    store.headLanded = false;
    store.hangUsageAfterHead = true;
    void client.call('POST', '/v1/batches', { batches }); // never answers
    await settleHung();
    expect(store.headLanded).toBe(true);
    store.hangUsageAfterHead = false;
    // Two requests: each settles what its budget lets it, and the pending batches are never counted twice.
    for (const s of ['o1', 'o2']) expect((await client.push(await makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) }))).status).toBe(201);
    await exact(store, account);
    expect((await client.call('POST', '/v1/batches', { batches })).json.results.every((x: { status?: string }) => x.status === 'exists')).toBe(true);
    await exact(store, account);
  });
});

/** Mock of a push killed before its head write: head writes hang for ever while `hangHeads` is set. */
class HangingHeadStore extends MemoryStore {
  hangHeads = false;
  override async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    if (this.hangHeads && isHead(key)) return new Promise(() => {});
    return super.putIfAbsent(key, body);
  }
}

describe('a pending batch whose head never lands', () => {
  it('stays named while its push may still run, is dropped uncounted once stale, and its retry counts it once', async () => {
    const store = new HangingHeadStore();
    const { account, client } = await rig(store);
    const b = await makeBatch({ session: 'w', host: 'h1', seq: 1, meta: metaFor('w'), count: 20 });
    store.hangHeads = true;
    void client.push(b); // killed before its head write
    await settleHung();
    store.hangHeads = false;
    expect((await counter(store, account))?.pending?.map((p) => p.session)).toEqual(['w']);
    // Young: another request leaves it named (its push might still write the head).
    expect((await client.push(await makeBatch({ session: 'o1', host: 'h1', seq: 1, meta: metaFor('o1') }))).status).toBe(201);
    const young = await counter(store, account);
    expect(young?.pending?.map((p) => p.session)).toEqual(['w']);
    // Made stale by hand (no waiting in tests): the next request drops it, counting nothing for it.
    await store.put(keys.usage(account), new TextEncoder().encode(JSON.stringify({ ...young, pending: young!.pending!.map((p) => ({ ...p, at: p.at - PENDING_STALE_MS - 1 })) })));
    expect((await client.push(await makeBatch({ session: 'o2', host: 'h1', seq: 1, meta: metaFor('o2') }))).status).toBe(201);
    const after = await counter(store, account);
    expect(after?.pending).toBeUndefined();
    expect(after?.bytes).toBe((await countUsage(store, account)).bytes);
    // The retry writes the head and counts the batch, once.
    expect((await client.push(b)).status).toBe(200);
    await exact(store, account);
  });
});

describe('the pending marker on Workers', () => {
  it('the most batches Workers take, new sealed sessions on both quotas, with an earlier batch left pending: inside the budget, and every batch counted once', async () => {
    const inner = new LostHeadStore();
    const store = new CountingStore(inner);
    const { account, client, admin } = await rig(store, { BUCKET: {} });
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 100, maxBytes: 10_000_000 })).status).toBe(200);
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    expect((await client.call('GET', '/v1/changes')).status).toBe(200); // the token's mark of the day, made here
    inner.headReply = 'lost';
    const lost = await makeSealedBatch({ session: 'lost', host: 'h1', seq: 1, meta: sealedMeta('k1') });
    expect((await client.call('POST', '/v1/batches', { batches: [lost] })).json.results[0].ok).toBe(false);
    expect((await counter(store, account))?.pending).toHaveLength(1);
    const batches = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => makeSealedBatch({ session: `e${i}`, host: 'h1', seq: 1, meta: sealedMeta('k1') })));
    store.calls = [];
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.json.results.every((x: { ok: boolean }) => x.ok), r.text).toBe(true);
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(WORKERS_SUBREQUESTS - TOKEN_MARK_MAX_OPS);
    expect((await counter(store, account))?.pending).toBeUndefined();
    await exact(store, account);
  });
});
