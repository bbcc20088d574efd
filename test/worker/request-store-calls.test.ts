// Store calls of each route's costliest request, counted on the real app over a memory store: each stays inside the Workers plan's subrequests with room for the token's mark.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { TOKEN_MARK_MAX_OPS, lookupToken, revokeToken, tokenIdOf, touchToken } from '../../worker/tokens.js';
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';
import { sha256Hex } from '../../worker/sha256.js';
import { keys } from '../../shared/keys.js';
import { DeleteSessionResponseSchema, LIMITS } from '../../shared/wire.js';
import { CountingStore } from './counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';
import { makeSealedBatch, putAccountKey, sealedMeta } from './sealed-helpers.js';

/** What a route may make: the plan's calls, less the most the token's mark may add after it (see touchToken). */
const BUDGET = WORKERS_SUBREQUESTS - TOKEN_MARK_MAX_OPS;
/** The bindings of a Workers deployment: the routes that cap their work for it look for the bucket. */
const WORKERS_ENV = { BUCKET: {} };

async function rig(env: Record<string, unknown> = WORKERS_ENV) {
  const store = new CountingStore(new MemoryStore());
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), env);
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const client = new TestClient(f, a.token);
  // A token's first use of the day records that day once: done here, so the counts below are the routes' own.
  expect((await client.call('GET', '/v1/changes')).status).toBe(200);
  return { store, client, admin: new TestClient(f, TEST_ADMIN_SECRET), account: a.account };
}

/** The calls `send` makes, after checking its status. */
async function callsOf(store: CountingStore, send: () => Promise<{ status: number; text: string }>): Promise<string[]> {
  store.calls = [];
  const r = await send();
  expect([200, 201], r.text).toContain(r.status);
  return store.calls;
}

/** A session of more than one pull page of batches, from three hosts. */
async function longSession(client: TestClient, session: string): Promise<void> {
  const n = LIMITS.maxBatchesPerPull + 6;
  for (let i = 0; i < n; i++) {
    const r = await client.push(await makeBatch({ session, host: `h${i % 3}`, seq: Math.floor(i / 3) + 1, ...(i < 3 ? { meta: metaFor(session) } : {}) }));
    expect(r.status, r.text).toBe(201);
  }
}

describe('a pull page within the subrequest budget', () => {
  it('a full page with its meta (POST /v1/sessions/:session/pull): the heads, the meta, the tombstone and one read per batch', async () => {
    const { store, client } = await rig();
    await longSession(client, 'long');
    let batches = 0;
    const calls = await callsOf(store, async () => {
      const r = await client.call('POST', '/v1/sessions/long/pull', { cursor: {}, withMeta: true });
      batches = r.json.batches.length;
      expect(r.json.meta).toBeDefined();
      return r;
    });
    expect(batches).toBe(LIMITS.maxBatchesPerPull);
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(BUDGET);
  });

  it('the same page through POST /v1/pulls, which takes one session per request on Workers', async () => {
    const { store, client } = await rig();
    await longSession(client, 'long');
    const calls = await callsOf(store, async () => {
      const r = await client.call('POST', '/v1/pulls', { sessions: [{ session: 'long', cursor: {}, withMeta: true }] });
      expect(r.json.results[0].batches).toHaveLength(LIMITS.maxBatchesPerPull);
      return r;
    });
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(BUDGET);
  });
});

describe('POST /v1/batches within the subrequest budget', () => {
  it("the most batches Workers take, each a new sealed session, on an account with both quotas: inside the plan's calls with room for the mark", async () => {
    const { store, client, admin, account } = await rig();
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 100, maxBytes: 10_000_000 })).status).toBe(200);
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    const batches = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => makeSealedBatch({ session: `e${i}`, host: 'h1', seq: 1, meta: sealedMeta('k1') })));
    const calls = await callsOf(store, async () => {
      const r = await client.call('POST', '/v1/batches', { batches });
      expect(r.json.results.every((x: { ok: boolean }) => x.ok), r.text).toBe(true);
      return r;
    });
    // The usage counter is read once for the request's checks, however many batches it holds.
    expect(calls.filter((c) => c === `get ${keys.usage(account)}`), calls.join('\n')).toHaveLength(2);
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(BUDGET);
  });

  it("later batches on an account with a session quota list no session's heads: a session this host has a head in is not new", async () => {
    const { store, client, admin, account } = await rig();
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 100 })).status).toBe(200);
    const first = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => makeBatch({ session: `q${i}`, host: 'h1', seq: 1, meta: metaFor(`q${i}`) })));
    expect((await client.call('POST', '/v1/batches', { batches: first })).status).toBe(200);
    const second = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => makeBatch({ session: `q${i}`, host: 'h1', seq: 2 })));
    const calls = await callsOf(store, async () => {
      const r = await client.call('POST', '/v1/batches', { batches: second });
      expect(r.json.results.every((x: { ok: boolean; status?: string }) => x.ok && x.status === 'created'), r.text).toBe(true);
      return r;
    });
    // Each batch lists its host's heads once (`list a/<acct>/heads/<session>/h1/`); the session-wide listing is gone.
    for (let i = 0; i < WORKERS_MAX_BATCHES; i++) {
      expect(calls.filter((c) => c === `list ${keys.sessionHeadsPrefix(account, `q${i}`)}`), calls.join('\n')).toEqual([]);
    }
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(BUDGET);
  });

  it("the most batches Workers take, each behind a head a crash left two seqs back (five retries, one new), on an account with both quotas: inside the budget", async () => {
    const { store, client, admin, account } = await rig();
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 100, maxBytes: 10_000_000 })).status).toBe(200);
    const sessions = Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => `lag${i}`);
    const bySeq: Awaited<ReturnType<typeof makeBatch>>[][] = [];
    for (const seq of [1, 2, 3]) {
      const batches = await Promise.all(sessions.map((s) => makeBatch({ session: s, host: 'h1', seq, meta: metaFor(s) })));
      bySeq.push(batches);
      // The last session stops at 2: its batch 3 is the request's one new batch.
      const sent = seq === 3 ? batches.slice(0, -1) : batches;
      expect((await client.call('POST', '/v1/batches', { batches: sent })).json.results.every((x: { ok: boolean }) => x.ok)).toBe(true);
    }
    // What crashes between batch writes and head writes leave: each host's head at 1, the batches after it stored.
    for (const [i, s] of sessions.entries()) {
      const top = i === sessions.length - 1 ? 2 : 3;
      await store.inner.delete(keys.head(account, s, 'h1', top));
      await store.inner.put(keys.head(account, s, 'h1', 1), new TextEncoder().encode(JSON.stringify({ seq: 1, batchId: 'b-h1-1' })));
    }
    const calls = await callsOf(store, async () => {
      // Retries carry their meta, as a client that never heard back sends it again.
      const r = await client.call('POST', '/v1/batches', { batches: bySeq[2] });
      expect(r.json.results.map((x: { status?: string }) => x.status), r.text).toEqual([...sessions.slice(0, -1).map(() => 'exists'), 'created']);
      return r;
    });
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(BUDGET);
    // Every head caught up, and the old ones are gone.
    for (const s of sessions) expect(await store.inner.list({ prefix: keys.hostHeadsPrefix(account, s, 'h1') })).toEqual({ keys: [keys.head(account, s, 'h1', 3)] });
  });

  it("the most batches Workers take, retried on a host whose heads were all lost, on an account with a session quota: the account's heads listed once, not each session's", async () => {
    const { store, client, admin, account } = await rig();
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 100, maxBytes: 10_000_000 })).status).toBe(200);
    const sessions = Array.from({ length: WORKERS_MAX_BATCHES }, (_, i) => `lost${i}`);
    let last: Awaited<ReturnType<typeof makeBatch>>[] = [];
    for (const seq of [1, 2]) {
      last = await Promise.all(sessions.map((s) => makeBatch({ session: s, host: 'h1', seq, meta: metaFor(s) })));
      expect((await client.call('POST', '/v1/batches', { batches: last })).json.results.every((x: { ok: boolean }) => x.ok)).toBe(true);
    }
    // Each session's one head removed behind the server's back: batches 1 and 2 stored, no head says so.
    for (const s of sessions) await store.inner.delete(keys.head(account, s, 'h1', 2));
    const calls = await callsOf(store, async () => {
      const r = await client.call('POST', '/v1/batches', { batches: last });
      expect(r.json.results.map((x: { status?: string }) => x.status), r.text).toEqual(sessions.map(() => 'exists'));
      return r;
    });
    for (const s of sessions) expect(calls.filter((c) => c === `list ${keys.sessionHeadsPrefix(account, s)}`), calls.join('\n')).toEqual([]);
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(BUDGET);
    for (const s of sessions) expect(await store.inner.list({ prefix: keys.hostHeadsPrefix(account, s, 'h1') })).toEqual({ keys: [keys.head(account, s, 'h1', 2)] });
  });

  it('one batch more than the cap is refused whole, before any call past the auth', async () => {
    const { store, client } = await rig();
    const batches = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES + 1 }, (_, i) => makeBatch({ session: `m${i}`, host: 'h1', seq: 1, meta: metaFor(`m${i}`) })));
    store.calls = [];
    const r = await client.call('POST', '/v1/batches', { batches });
    expect(r.status, r.text).toBe(413);
    expect(r.json.error.details).toEqual({ maxBatches: WORKERS_MAX_BATCHES });
    expect(store.calls.filter((c) => !c.startsWith('get tokens/')), store.calls.join('\n')).toEqual([]);
  });
});

describe('DELETE /v1/sessions/:session within the subrequest budget', () => {
  it('a session of many batches and shares on an account with a quota (each batch read before it goes): every step inside the budget, and the deletion completes', async () => {
    const { store, client, admin, account } = await rig();
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    await longSession(client, 'gone');
    for (let i = 0; i < 3; i++) {
      const r = await client.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 86_400_000).toISOString(), session: 'gone' });
      expect(r.status, r.text).toBe(201);
    }
    for (let steps = 1; ; steps++) {
      store.calls = [];
      const r = await client.call('DELETE', '/v1/sessions/gone', { host: 'h1' });
      expect(r.status, r.text).toBe(200);
      expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(BUDGET);
      if (DeleteSessionResponseSchema.parse(r.json).complete) break;
      expect(steps).toBeLessThan(20);
    }
    expect((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes).toBe(0);
  });
});

/**
 * A real memory store on which a real revocation of the armed token runs right after the mark's putIfAbsent of its
 * index entry: the race touchToken guards against, made to happen at that point (the store itself is not faked).
 */
class RevokedMidMarkStore extends MemoryStore {
  armed: { account: string; id: string } | null = null;
  override async putIfAbsent(key: string, body: Uint8Array | readonly Uint8Array[]): Promise<boolean> {
    const created = await super.putIfAbsent(key, body);
    const a = this.armed;
    if (a && key === keys.accountToken(a.account, a.id)) {
      this.armed = null;
      expect(await revokeToken(this, a.account, a.id)).toBe(true);
    }
    return created;
  }
}

describe("the token's mark", () => {
  it('TOKEN_MARK_MAX_OPS is what its costliest path makes: a record from before token ids, a revocation racing it', async () => {
    const inner = new RevokedMidMarkStore();
    const store = new CountingStore(inner);
    const account = 'acct-legacy';
    const token = 'sst_legacy-token-from-an-older-server-0123456789';
    const hash = await sha256Hex(token);
    await inner.put(keys.token(hash), new TextEncoder().encode(JSON.stringify({ account, created: '2026-01-01T00:00:00.000Z' })));
    const seen = await lookupToken(inner, token);
    expect(seen.ok).toBe(true);
    if (!seen.ok) return;
    inner.armed = { account, id: tokenIdOf(hash) };
    // The revocation's own calls go to the inner store: only the mark's are counted.
    expect(await touchToken(store, seen)).toBe(false);
    expect(inner.armed).toBeNull();
    expect(store.calls, store.calls.join('\n')).toHaveLength(TOKEN_MARK_MAX_OPS);
    // And the race is lost by nobody: the token stays revoked.
    expect((await lookupToken(inner, token)).ok).toBe(false);
  });
});
