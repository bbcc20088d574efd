// Token routes on the real app: list (never the secret), issue, revoke (401 on every route at once), admin revoke, last-used writes.
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { CreateOwnTokenResponseSchema, ListTokensResponseSchema } from '../../shared/wire.js';
import { sha256Hex } from '../../worker/sha256.js';
import { lookupToken, revokeToken, touchToken } from '../../worker/tokens.js';
import { CountingStore } from '../worker/counting-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';

const ADMIN = TEST_ADMIN_SECRET;

let store: CountingStore;
let f: Fetcher;
let alice: TestClient;
let account: string;
let admin: TestClient;

beforeEach(async () => {
  // Its log of calls shows how often "last used" is written.
  store = new CountingStore(new MemoryStore());
  f = appFetcher(createApp({ store, adminSecret: ADMIN }));
  const a = await adminCreateAccount(f, ADMIN);
  account = a.account;
  alice = new TestClient(f, a.token);
  admin = new TestClient(f, ADMIN);
});

/** A real MemoryStore whose writes of token records fail while `failTokens` is set (a mock of a store fault). */
class TokenWriteFailingStore extends MemoryStore {
  failTokens = false;
  override async put(key: string, body: Uint8Array): Promise<void> {
    if (this.failTokens && key.startsWith('tokens/')) throw new Error(`injected: cannot write ${key}`);
    return super.put(key, body);
  }
}

describe('the last-used mark cannot be written', () => {
  it('the request still gets its answer, the failure is logged, and the mark is written by a later request', async () => {
    const s = new TokenWriteFailingStore();
    const fx = appFetcher(createApp({ store: s, adminSecret: ADMIN }));
    const a = await adminCreateAccount(fx, ADMIN);
    const hash = await sha256Hex(a.token);
    await s.put(keys.token(hash), new TextEncoder().encode(JSON.stringify({ ...JSON.parse(new TextDecoder().decode((await s.get(keys.token(hash)))!.body)), lastUsed: '2000-01-01' })));
    s.failTokens = true;
    const logged: string[] = [];
    const orig = console.error;
    console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
    try {
      const res = await fx.fetch(new Request('http://x/v1/whoami', { headers: { authorization: `Bearer ${a.token}` } }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ account: a.account });
    } finally {
      console.error = orig;
    }
    expect(logged.join('\n')).toMatch(/could not mark token tok_[0-9a-f]+ as used today .*injected: cannot write/);
    s.failTokens = false;
    await fx.fetch(new Request('http://x/v1/whoami', { headers: { authorization: `Bearer ${a.token}` } }));
    const rec = JSON.parse(new TextDecoder().decode((await s.get(keys.token(hash)))!.body)) as { lastUsed?: string };
    expect(rec.lastUsed).not.toBe('2000-01-01');
  });
});

/** One request to every route that takes an account token (the share blob and viewer take none). */
async function everyTokenRoute(c: TestClient): Promise<number[]> {
  const batch = await makeBatch({ session: 's9', host: 'h', seq: 1, meta: metaFor('s9') });
  const answers = await Promise.all([
    c.call('GET', '/v1/whoami'),
    c.push(batch),
    c.pull('s1'),
    c.call('GET', '/v1/changes'),
    c.call('GET', '/v1/sessions/s1'),
    c.call('DELETE', '/v1/sessions/s1', { host: 'h' }),
    c.call('POST', '/v1/sessions/s1/undelete'),
    c.call('POST', '/v1/shares', { ciphertext: 'eA', expiresAt: new Date(Date.now() + 3600_000).toISOString() }),
    c.call('GET', '/v1/shares'),
    c.call('DELETE', '/v1/shares/abcdefghijklmnop'),
    c.call('GET', '/v1/tokens'),
    c.call('POST', '/v1/tokens', { name: 'x' }),
    c.call('DELETE', '/v1/tokens/current'),
  ]);
  return answers.map((a) => a.status);
}

describe('GET/POST/DELETE /v1/tokens', () => {
  it('lists id, name, created and last used day, marks the current one, never shows a secret or its hash', async () => {
    const laptop = CreateOwnTokenResponseSchema.parse((await alice.call('POST', '/v1/tokens', { name: 'laptop' })).json);
    expect(laptop.token).toMatch(/^sst_/);
    expect(laptop.id).toMatch(/^tok_[0-9a-f]{20}$/);
    const asLaptop = new TestClient(f, laptop.token);
    const r = await asLaptop.call('GET', '/v1/tokens');
    const { tokens } = ListTokensResponseSchema.parse(r.json);
    expect(tokens.map((t) => [t.name, t.current])).toEqual([
      [undefined, false],
      ['laptop', true],
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(tokens[1]!.lastUsed).toBe(today);
    expect(tokens[0]!.lastUsed).toBe(today); // alice's token made the POST
    expect(r.text).not.toContain(laptop.token);
    expect(r.text).not.toContain(await sha256Hex(laptop.token));
  });

  it('a revoked token gets 401 on every route at once, with a message that says to log in again; the others keep working', async () => {
    const laptop = CreateOwnTokenResponseSchema.parse((await alice.call('POST', '/v1/tokens', { name: 'laptop' })).json);
    const asLaptop = new TestClient(f, laptop.token);
    expect((await asLaptop.call('GET', '/v1/whoami')).status).toBe(200);
    const del = await alice.call('DELETE', `/v1/tokens/${laptop.id}`);
    expect(del.json).toEqual({ revoked: true, id: laptop.id });
    const statuses = await everyTokenRoute(asLaptop);
    expect(statuses).toEqual(statuses.map(() => 401));
    const who = await asLaptop.call('GET', '/v1/whoami');
    expect(who.json.error.message).toMatch(/token tok_[0-9a-f]+ \("laptop"\) was revoked at .*log in again/);
    expect((await alice.call('GET', '/v1/whoami')).status).toBe(200);
    expect(ListTokensResponseSchema.parse((await alice.call('GET', '/v1/tokens')).json).tokens.map((t) => t.id)).not.toContain(laptop.id);
    // Revoking it again, or a token of another account, is a 404.
    expect((await alice.call('DELETE', `/v1/tokens/${laptop.id}`)).status).toBe(404);
    const bob = await adminCreateAccount(f, ADMIN);
    const bobToken = CreateOwnTokenResponseSchema.parse((await new TestClient(f, bob.token).call('POST', '/v1/tokens', { name: 'b' })).json);
    expect((await alice.call('DELETE', `/v1/tokens/${bobToken.id}`)).status).toBe(404);
    expect((await new TestClient(f, bobToken.token).call('GET', '/v1/whoami')).status).toBe(200);
  });

  it('DELETE /v1/tokens/current revokes the token making the request', async () => {
    const t = CreateOwnTokenResponseSchema.parse((await alice.call('POST', '/v1/tokens', {})).json);
    const c = new TestClient(f, t.token);
    expect((await c.call('DELETE', '/v1/tokens/current')).json).toEqual({ revoked: true, id: t.id });
    expect((await c.call('GET', '/v1/whoami')).status).toBe(401);
  });

  it('refuses a bad name and an unknown field with 400, storing nothing', async () => {
    expect((await alice.call('POST', '/v1/tokens', { name: 'x'.repeat(101) })).status).toBe(400);
    expect((await alice.call('POST', '/v1/tokens', { name: 'ok', admin: true })).status).toBe(400);
    expect(ListTokensResponseSchema.parse((await alice.call('GET', '/v1/tokens')).json).tokens).toHaveLength(1);
  });
});

describe('last used', () => {
  it('is written at most once a day per token, not once per request', async () => {
    for (let i = 0; i < 20; i++) expect((await alice.call('GET', '/v1/changes')).status).toBe(200);
    const token = alice.token!;
    const record = keys.token(await sha256Hex(token));
    expect(store.calls.filter((c) => c === `put ${record}`)).toHaveLength(1);
  });

  it('a record from before token ids gets its id and index on first use, once', async () => {
    const legacy = 'sst_legacy-token-from-an-older-server-0123456789';
    await store.put(keys.token(await sha256Hex(legacy)), new TextEncoder().encode(JSON.stringify({ account, created: '2026-01-01T00:00:00.000Z' })));
    const c = new TestClient(f, legacy);
    expect((await c.call('GET', '/v1/whoami')).status).toBe(200);
    const listed = ListTokensResponseSchema.parse((await c.call('GET', '/v1/tokens')).json).tokens.find((t) => t.current)!;
    expect(listed.id).toMatch(/^tok_/);
    expect((await alice.call('DELETE', `/v1/tokens/${listed.id}`)).status).toBe(200);
    expect((await c.call('GET', '/v1/whoami')).status).toBe(401);
  });

  it('a last-used write racing a revocation cannot bring the token back', async () => {
    const t = CreateOwnTokenResponseSchema.parse((await alice.call('POST', '/v1/tokens', { name: 'race' })).json);
    // The request read the record (live, not yet used today) before the revocation ran ...
    const seen = await lookupToken(store, t.token);
    expect(seen.ok).toBe(true);
    expect(await revokeToken(store, account, t.id)).toBe(true);
    // ... and writes its last-used mark after it.
    if (seen.ok) expect(await touchToken(store, seen)).toBe(false);
    expect((await lookupToken(store, t.token)).ok).toBe(false);
    expect((await new TestClient(f, t.token).call('GET', '/v1/whoami')).status).toBe(401);
  });
});

describe('admin token routes', () => {
  it('lists, issues with a name, and revokes any token of any account', async () => {
    const issued = await admin.call('POST', `/v1/admin/accounts/${account}/tokens`, { name: 'ci' });
    expect(issued.status).toBe(201);
    expect(issued.json).toMatchObject({ account, name: 'ci' });
    const list = ListTokensResponseSchema.parse((await admin.call('GET', `/v1/admin/accounts/${account}/tokens`)).json).tokens;
    // Two tokens made within the same millisecond may list either way: the order is not what this shows.
    expect(list.map((t) => t.name ?? '').sort()).toEqual(['', 'ci']);
    const del = await admin.call('DELETE', `/v1/admin/accounts/${account}/tokens/${issued.json.id}`);
    expect(del.json).toEqual({ revoked: true, id: issued.json.id });
    expect((await new TestClient(f, issued.json.token).call('GET', '/v1/changes')).status).toBe(401);
    expect((await admin.call('DELETE', `/v1/admin/accounts/${account}/tokens/tok_00000000000000000000`)).status).toBe(404);
    // A user token is no admin secret.
    expect((await alice.call('DELETE', `/v1/admin/accounts/${account}/tokens/${list[0]!.id}`)).status).toBe(401);
  });
});
