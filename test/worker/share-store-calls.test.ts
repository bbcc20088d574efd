// Store calls of the share list and of a session's deletion when share records are damaged, counted on the real app over a memory store: every request stays inside the Workers plan's 50.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { sha256Hex } from '../../worker/sha256.js';
import { keys } from '../../shared/keys.js';
import { DeleteSessionResponseSchema, ListSharesResponseSchema } from '../../shared/wire.js';
import { SHARE_OPS, deleteSessionStep } from '../../worker/session-delete.js';
import { TOKEN_MARK_MAX_OPS } from '../../worker/tokens.js';
import { WORKERS_SUBREQUESTS } from '../../worker/store/counted-store.js';
import { SHARES_PAGE_EXTRA_OPS } from '../../worker/routes/shares.js';
import { MAX_PURGE_OPS } from '../../worker/share-page.js';
import { CountingStore } from './counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const DAY = 86_400_000;
/**
 * What a request may make here: the Workers plan's calls, less the token's mark on its first use of a day (up to 5: a
 * record from before token ids, with a revocation racing; see touchToken).
 */
const BUDGET = WORKERS_SUBREQUESTS - TOKEN_MARK_MAX_OPS;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function rig() {
  const store = new CountingStore(new MemoryStore());
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const client = new TestClient(f, a.token);
  // A token's first use of the day records that day once: done here, so the counts below are every request's.
  expect((await client.call('GET', '/v1/changes')).status).toBe(200);
  return { store, client, account: a.account };
}

async function makeShares(client: TestClient, n: number, session?: string): Promise<{ id: string; token: string; hash: string }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = await client.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + DAY).toISOString(), ...(session ? { session } : {}) });
    expect(r.status, r.text).toBe(201);
    out.push({ id: r.json.id as string, token: r.json.token as string, hash: await sha256Hex(r.json.token) });
  }
  return out;
}

/** Each index entry cut after its hash, so each costs a read of the share record it names. */
async function damageAfterHash(store: CountingStore, account: string, shares: { id: string; hash: string }[]): Promise<void> {
  for (const s of shares) {
    const k = keys.accountShare(account, s.id);
    const whole = (await store.get(k))!.body;
    await store.put(k, whole.subarray(0, decoder.decode(whole).indexOf(s.hash) + 65));
  }
}

/** Every page of GET /v1/shares, with the store calls each made. */
async function allPages(store: CountingStore, client: TestClient) {
  const pages = [];
  let page: string | undefined;
  do {
    store.calls = [];
    const r = await client.call('GET', `/v1/shares${page === undefined ? '' : `?page=${page}`}`);
    expect(r.status, r.text).toBe(200);
    const body = ListSharesResponseSchema.parse(r.json);
    pages.push({ body, calls: store.calls.length });
    page = body.nextPage;
    expect(pages.length).toBeLessThan(50);
  } while (page !== undefined);
  return pages;
}

describe('GET /v1/shares within the subrequest budget', () => {
  it('a page full of damaged entries: the salvage reads are bounded, the page is cut short with a cursor, and every entry is listed once', async () => {
    const { store, client, account } = await rig();
    const shares = await makeShares(client, 45);
    await damageAfterHash(store, account, shares);
    const pages = await allPages(store, client);
    for (const p of pages) expect(p.calls, `a page of ${p.body.damaged?.length} damaged`).toBeLessThanOrEqual(BUDGET);
    const listed = pages.flatMap((p) => p.body.damaged ?? []);
    expect(listed.map((d) => d.id).sort()).toEqual(shares.map((s) => s.id).sort());
    expect(listed.every((d) => d.revocableById)).toBe(true);
  });

  it("a page full of damaged entries on the token's first use of a day, its index entry dropped by a revocation racing: inside the plan's calls", async () => {
    const { store, client, account } = await rig();
    await damageAfterHash(store, account, await makeShares(client, 45));
    // Yesterday's mark, and no index entry: the mark writes the record, reads the entry, reads the record and writes it again.
    const hash = await sha256Hex(client.token!);
    const rec = JSON.parse(decoder.decode((await store.get(keys.token(hash)))!.body));
    await store.put(keys.token(hash), encoder.encode(JSON.stringify({ ...rec, lastUsed: '2000-01-01' })));
    await store.delete(keys.accountToken(account, rec.id));
    store.calls = [];
    const r = await client.call('GET', '/v1/shares');
    expect(r.status, r.text).toBe(200);
    // The token's read, then its mark's four calls.
    expect(store.calls.filter((c) => c.endsWith(keys.token(hash)) || c.endsWith(keys.accountToken(account, rec.id)))).toHaveLength(5);
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(WORKERS_SUBREQUESTS);
  });

  it('a page of dead shares: their purges are bounded, and the ones left over go on a later list', async () => {
    const { store, client, account } = await rig();
    const shares = await makeShares(client, 40, undefined);
    // Expired (the entry says so; its record too): each is purged, which costs writes.
    const past = new Date(Date.now() - DAY).toISOString();
    for (const s of shares) {
      const k = keys.accountShare(account, s.id);
      await store.put(k, encoder.encode(JSON.stringify({ ...JSON.parse(decoder.decode((await store.get(k))!.body)), expiresAt: past })));
    }
    let lists = 0;
    for (;;) {
      const [p] = await allPages(store, client);
      lists++;
      expect(p!.calls).toBeLessThanOrEqual(BUDGET);
      expect(p!.body.shares).toEqual([]);
      if ((await store.list({ prefix: keys.accountSharesPrefix(account) })).keys.length === 0) break;
      expect(lists).toBeLessThan(40);
    }
    for (const s of shares) expect((await client.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
  });

  it("a page of a session's revoked shares: a purge also drops the session's pointer (three writes each), still bounded", async () => {
    const { store, client, account } = await rig();
    expect((await client.push(await makeBatch({ session: 'shared', host: 'h1', seq: 1, meta: metaFor('shared') }))).status).toBe(201);
    const shares = await makeShares(client, 40, 'shared');
    // Revoked in the index entry only (a revocation cut short after it): each list purges what its budget allows.
    for (const s of shares) {
      const k = keys.accountShare(account, s.id);
      await store.put(k, encoder.encode(JSON.stringify({ ...JSON.parse(decoder.decode((await store.get(k))!.body)), revoked: true })));
    }
    const pointers = `${keys.sessionPrefix(account, 'shared')}shares/`;
    for (let lists = 1; ; lists++) {
      const [p] = await allPages(store, client);
      expect(p!.calls).toBeLessThanOrEqual(BUDGET);
      expect(p!.body.shares).toEqual([]);
      if ((await store.list({ prefix: pointers })).keys.length === 0) break;
      expect(lists).toBeLessThan(45);
    }
    expect((await store.list({ prefix: keys.accountSharesPrefix(account) })).keys).toEqual([]);
    for (const s of shares) expect((await client.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
  });
});

describe('GET /v1/shares purges past damaged entries', () => {
  it("a page's budget past its reads holds the costliest purge, so every page takes its first entry", () => {
    expect(SHARES_PAGE_EXTRA_OPS).toBeGreaterThanOrEqual(MAX_PURGE_OPS);
  });

  for (const place of ['first', 'last'] as const) {
    it(`a damaged entry (its bytes still naming its hash, so a read each list) ${place} in key order on a page of a session's expired shares: it is listed as damaged every time, the live share stays, and every expired one is purged`, async () => {
      const { store, client, account } = await rig();
      expect((await client.push(await makeBatch({ session: 'shared', host: 'h1', seq: 1, meta: metaFor('shared') }))).status).toBe(201);
      const shares = (await makeShares(client, 7, 'shared')).sort((a, b) => (a.id < b.id ? -1 : 1));
      const [damaged, live, ...dead] = place === 'first' ? shares : [shares[6]!, shares[0]!, ...shares.slice(1, 6)];
      await damageAfterHash(store, account, [damaged!]);
      const past = new Date(Date.now() - DAY).toISOString();
      for (const s of dead) {
        const k = keys.accountShare(account, s.id);
        await store.put(k, encoder.encode(JSON.stringify({ ...JSON.parse(decoder.decode((await store.get(k))!.body)), expiresAt: past })));
      }
      const pointers = `${keys.sessionPrefix(account, 'shared')}shares/`;
      for (let lists = 1; ; lists++) {
        const pages = await allPages(store, client);
        for (const p of pages) expect(p.calls, JSON.stringify(p.body)).toBeLessThanOrEqual(BUDGET);
        expect(pages.flatMap((p) => p.body.damaged ?? []).map((d) => d.id)).toEqual([damaged!.id]);
        expect(pages.flatMap((p) => p.body.shares).map((x) => x.id)).toEqual([live!.id]);
        if ((await store.list({ prefix: pointers })).keys.length === 2) break;
        // A list purges at least one of them: at most one list per expired share.
        expect(lists).toBeLessThan(dead.length);
      }
      for (const s of dead) {
        expect(await store.get(keys.accountShare(account, s.id))).toBeNull();
        expect((await client.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
      }
      expect((await client.call('GET', `/v1/shares/${live!.token}/blob`)).status).toBe(200);
    });
  }
});

/** A session of `n` shares all damaged the costliest way to revoke. */
async function costliestShares(store: CountingStore, client: TestClient, account: string, session: string, n: number) {
  expect((await client.push(await makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session) }))).status).toBe(201);
  const shares = await makeShares(client, n, session);
  for (const [i, s] of shares.entries()) {
    // The pointer names other shares' hashes (crafted: each would be a read that does not confirm it); the entry is
    // cut after its own hash.
    const others = [1, 2, 3, 4].map((d) => shares[(i + d) % shares.length]!.hash);
    await store.put(keys.sessionShare(account, session, s.id), encoder.encode(`{"id":"${s.id}",${others.map((h) => `"tokenHash":"${h}"`).join(',')},"x`));
    const k = keys.accountShare(account, s.id);
    const whole = (await store.get(k))!.body;
    await store.put(k, whole.subarray(0, decoder.decode(whole).indexOf(s.hash) + 65));
  }
  return shares;
}

describe('DELETE /v1/sessions/:session within the subrequest budget', () => {
  it('SHARE_OPS is what one share damaged the costliest way costs, so a step of many passes its budget by one share at most', async () => {
    const { store, client, account } = await rig();
    await costliestShares(store, client, account, 'costly', 20);
    // A budget for several shares at once, so a SHARE_OPS below their real cost shows as an overrun of several.
    const budget = 80;
    store.calls = [];
    const step = await deleteSessionStep(store, account, 'costly', 'h1', budget);
    expect(step.sharesRevoked).toBeGreaterThan(1);
    // Shares are taken by SHARE_OPS each; were it below their real cost, a step of many would overrun by far more.
    expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(budget + SHARE_OPS + 3);
    // Pinned: the pointer, a record its damaged bytes name that does not confirm it, the entry, the record it names,
    // the tombstone and the two removals (see pointedShare); a change to that path must change this too.
    expect(SHARE_OPS).toBe(7);
  });

  it('a session whose shares are all damaged the costliest way: every step stays inside the budget, and the deletion completes', async () => {
    const { store, client, account } = await rig();
    const session = 'many-damaged';
    const shares = await costliestShares(store, client, account, session, 12);
    let revoked = 0;
    for (let steps = 1; ; steps++) {
      store.calls = [];
      const r = await client.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
      expect(r.status, r.text).toBe(200);
      expect(store.calls.length, store.calls.join('\n')).toBeLessThanOrEqual(BUDGET);
      const body = DeleteSessionResponseSchema.parse(r.json);
      revoked += body.sharesRevoked;
      if (body.complete) break;
      expect(steps).toBeLessThan(20);
    }
    expect(revoked).toBe(shares.length);
    for (const s of shares) expect((await client.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
  });
});
