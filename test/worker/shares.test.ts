// Share routes on the real app with MemoryStore: create, blob, list, revoke, expiry, token hashing, error answers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import { SHARE_TOKEN_RE, fromBase64Url } from '../../shared/share-crypto.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher } from './routes-helpers.js';

const ADMIN = TEST_ADMIN_SECRET;
const DAY = 24 * 3600 * 1000;

async function setup() {
  const store = new MemoryStore();
  const target = appFetcher(createApp({ store, adminSecret: ADMIN }));
  const alice = await adminCreateAccount(target, ADMIN);
  const bob = await adminCreateAccount(target, ADMIN);
  return { store, target, alice: new TestClient(target, alice.token), bob: new TestClient(target, bob.token), anon: new TestClient(target), aliceAccount: alice.account };
}

function createBody(extra: Record<string, unknown> = {}) {
  return { ciphertext: 'Y2lwaGVydGV4dC1ub3QtcmVhbGx5', expiresAt: new Date(Date.now() + 7 * DAY).toISOString(), session: 'sess-1', entryId: 'e-9', entryCount: 9, ...extra };
}

/** Every key and body in the store, as text. */
async function dump(store: MemoryStore): Promise<{ key: string; body: string }[]> {
  const out: { key: string; body: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(cursor === undefined ? {} : { cursor });
    for (const key of page.keys) out.push({ key, body: new TextDecoder().decode((await store.get(key))!.body) });
    cursor = page.cursor;
  } while (cursor !== undefined);
  return out;
}

describe('POST /v1/shares and GET /v1/shares/:token/blob', () => {
  it('creates a share with a server-generated token and serves its ciphertext without auth', async () => {
    const { alice, anon } = await setup();
    const r = await alice.call('POST', '/v1/shares', createBody());
    expect(r.status).toBe(201);
    expect(r.json.token).toMatch(SHARE_TOKEN_RE);
    expect(fromBase64Url(r.json.token).length * 8).toBeGreaterThanOrEqual(128);
    expect(r.json.url).toBe(`http://sessync.test/s/${r.json.token}`);
    expect(r.json.id).toMatch(/^[a-z0-9]{16}$/);
    const blob = await anon.call('GET', `/v1/shares/${r.json.token}/blob`);
    expect(blob.status).toBe(200);
    expect(blob.json).toEqual({ ciphertext: createBody().ciphertext, expiresAt: r.json.expiresAt, id: r.json.id });
  });

  it('stores the token only as its SHA-256: the raw token appears in no key and no body', async () => {
    const { store, alice } = await setup();
    const tokens: string[] = [];
    for (let i = 0; i < 20; i++) tokens.push((await alice.call('POST', '/v1/shares', createBody())).json.token);
    expect(new Set(tokens).size).toBe(20);
    const all = await dump(store);
    for (const t of tokens) {
      for (const o of all) {
        expect(o.key).not.toContain(t);
        expect(o.body).not.toContain(t);
      }
      // What the store holds instead: the record under the token's hash.
      expect(await store.get(keys.share(await sha256Hex(t)))).not.toBeNull();
    }
  });

  it('the share id is unrelated to the token and the session', async () => {
    const { alice } = await setup();
    const r = await alice.call('POST', '/v1/shares', createBody({ session: 'abcdefghijklmnop' }));
    expect(r.json.token).not.toContain(r.json.id);
    expect(r.json.id).not.toBe('abcdefghijklmnop');
  });

  it('refuses bad input: no auth, past or too-distant expiry, missing ciphertext, unknown fields', async () => {
    const { alice, anon } = await setup();
    expect((await anon.call('POST', '/v1/shares', createBody())).status).toBe(401);
    const past = await alice.call('POST', '/v1/shares', createBody({ expiresAt: new Date(Date.now() - 1000).toISOString() }));
    expect(past.status).toBe(400);
    expect(past.json.error.code).toBe('bad_input');
    expect((await alice.call('POST', '/v1/shares', createBody({ expiresAt: new Date(Date.now() + 400 * DAY).toISOString() }))).status).toBe(400);
    expect((await alice.call('POST', '/v1/shares', createBody({ ciphertext: '' }))).status).toBe(400);
    expect((await alice.call('POST', '/v1/shares', createBody({ key: 'never-send-keys' }))).status).toBe(400);
  });

  it('answers 404 with a JSON error for unknown and malformed tokens', async () => {
    const { anon } = await setup();
    for (const t of ['A'.repeat(43), 'short', '..%2F..%2Fx']) {
      const r = await anon.call('GET', `/v1/shares/${t}/blob`);
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
  });
});

describe('GET /v1/shares', () => {
  it('lists only the caller\'s shares, newest first, without token or hash', async () => {
    const { alice, bob } = await setup();
    const a1 = (await alice.call('POST', '/v1/shares', createBody({ session: 's-one' }))).json;
    await new Promise((r) => setTimeout(r, 5));
    const a2 = (await alice.call('POST', '/v1/shares', createBody({ session: 's-two' }))).json;
    await bob.call('POST', '/v1/shares', createBody());
    const list = await alice.call('GET', '/v1/shares');
    expect(list.status).toBe(200);
    expect(list.json.shares.map((s: { id: string }) => s.id)).toEqual([a2.id, a1.id]);
    expect(list.json.shares[0]).toMatchObject({ session: 's-two', entryId: 'e-9', entryCount: 9, revoked: false, expiresAt: a2.expiresAt });
    expect(list.text).not.toContain(a1.token);
    expect(list.text).not.toContain('tokenHash');
    expect((await bob.call('GET', '/v1/shares')).json.shares).toHaveLength(1);
  });

  it('pages: at most 40 per answer, nextPage until every share was listed once', async () => {
    const { alice } = await setup();
    const made = new Set<string>();
    for (let i = 0; i < 45; i++) made.add((await alice.call('POST', '/v1/shares', createBody())).json.id);
    const first = await alice.call('GET', '/v1/shares');
    expect(first.json.shares).toHaveLength(40);
    expect(first.json.nextPage).toMatch(/^[a-z0-9]{16}$/);
    const second = await alice.call('GET', `/v1/shares?page=${first.json.nextPage}`);
    expect(second.json.shares).toHaveLength(5);
    expect(second.json.nextPage).toBeUndefined();
    const seen = [...first.json.shares, ...second.json.shares].map((s: { id: string }) => s.id);
    expect(new Set(seen)).toEqual(made);
    expect((await alice.call('GET', '/v1/shares?page=../../x')).status).toBe(400);
  });
});

describe('DELETE /v1/shares/:idOrToken', () => {
  it('revokes by id: the blob answers 410, the ciphertext is gone from the store, the share leaves the list', async () => {
    const { store, alice, anon } = await setup();
    const s = (await alice.call('POST', '/v1/shares', createBody())).json;
    const del = await alice.call('DELETE', `/v1/shares/${s.id}`);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ revoked: true, id: s.id });
    const blob = await anon.call('GET', `/v1/shares/${s.token}/blob`);
    expect(blob.status).toBe(410);
    expect(blob.json.error).toMatchObject({ code: 'gone', message: expect.stringMatching(/revoked/) });
    expect((await dump(store)).some((o) => o.body.includes(createBody().ciphertext))).toBe(false);
    // A revoked share leaves the list and the index (housekeeping): revoking it again finds nothing.
    expect((await alice.call('GET', '/v1/shares')).json.shares).toEqual([]);
    expect((await store.list({ prefix: 'a/' })).keys.filter((k) => k.includes('/shares/'))).toEqual([]);
    expect((await alice.call('DELETE', `/v1/shares/${s.id}`)).status).toBe(404);
  });

  it('revokes by token', async () => {
    const { alice, anon } = await setup();
    const s = (await alice.call('POST', '/v1/shares', createBody())).json;
    expect((await alice.call('DELETE', `/v1/shares/${s.token}`)).json).toEqual({ revoked: true, id: s.id });
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
  });

  it('someone else cannot revoke: 404 by id and by token, and the share still works', async () => {
    const { alice, bob, anon } = await setup();
    const s = (await alice.call('POST', '/v1/shares', createBody())).json;
    for (const ref of [s.id, s.token, 'nonexistent12345']) {
      const r = await bob.call('DELETE', `/v1/shares/${ref}`);
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
    expect((await anon.call('DELETE', `/v1/shares/${s.id}`)).status).toBe(401);
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(200);
  });
});

describe('expiry', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['Date'] }));
  afterEach(() => vi.useRealTimers());

  it('an expired link answers 410 and says when it expired', async () => {
    const { alice, anon } = await setup();
    const s = (await alice.call('POST', '/v1/shares', createBody({ expiresAt: new Date(Date.now() + 3600_000).toISOString() }))).json;
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(200);
    vi.setSystemTime(Date.now() + 3600_000 + 1);
    const r = await anon.call('GET', `/v1/shares/${s.token}/blob`);
    expect(r.status).toBe(410);
    expect(r.json.error.message).toContain('expired');
  });
});
