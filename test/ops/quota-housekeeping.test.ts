// Per-account quotas set by the admin (off by default, 413 naming the limit) and the lazy purge of expired shares.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { QuotaResponseSchema } from '../../shared/wire.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';

const ADMIN = TEST_ADMIN_SECRET;
const HOUR = 3600 * 1000;

let store: MemoryStore;
let f: Fetcher;
let alice: TestClient;
let account: string;
let admin: TestClient;

beforeEach(async () => {
  store = new MemoryStore();
  f = appFetcher(createApp({ store, adminSecret: ADMIN }));
  const a = await adminCreateAccount(f, ADMIN);
  account = a.account;
  alice = new TestClient(f, a.token);
  admin = new TestClient(f, ADMIN);
});

afterEach(() => {
  vi.useRealTimers();
});

async function push(session: string, seq: number, count = 3) {
  return alice.push(await makeBatch({ session, host: 'h', seq, count, meta: metaFor(session) }));
}

describe('quota', () => {
  it('is off by default: any number of sessions and bytes', async () => {
    for (let i = 0; i < 5; i++) expect((await push(`s${i}`, 1, 50)).status).toBe(201);
    const q = QuotaResponseSchema.parse((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json);
    expect(q.quota).toEqual({});
    expect(q.usage.sessions).toBe(5);
    expect(await store.get(keys.quota(account))).toBeNull();
  });

  it('maxSessions: a new session over the limit is refused with 413 naming it; existing sessions still grow; a deletion frees room', async () => {
    expect((await push('s1', 1)).status).toBe(201);
    const set = await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxSessions: 1 });
    expect(QuotaResponseSchema.parse(set.json)).toMatchObject({ quota: { maxSessions: 1 }, usage: { sessions: 1 } });
    const refused = await push('s2', 1);
    expect(refused.status).toBe(413);
    expect(refused.json.error).toMatchObject({ code: 'too_large', retryable: false });
    expect(refused.json.error.message).toMatch(/quota exceeded \(maxSessions\).*1 of its 1 sessions/);
    expect(await store.get(keys.batch(account, 's2', 'h', 1))).toBeNull();
    expect((await push('s1', 2)).status).toBe(201);
    expect((await alice.call('DELETE', '/v1/sessions/s1', { host: 'h' })).json).toMatchObject({ complete: true });
    expect((await push('s2', 1)).status).toBe(201);
  });

  it('maxBytes: a batch that would cross it is refused with 413 naming it and nothing is stored', async () => {
    expect((await push('s1', 1)).status).toBe(201);
    const used = QuotaResponseSchema.parse((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10_000 })).json).usage.bytes;
    expect(used).toBeGreaterThan(0);
    expect((await push('s1', 2, 3)).status).toBe(201);
    const big = await push('s1', 3, 200);
    expect(big.status).toBe(413);
    expect(big.json.error.message).toMatch(/quota exceeded \(maxBytes\).*of its 0\.010 MB/);
    expect(await store.get(keys.batch(account, 's1', 'h', 3))).toBeNull();
    const q = QuotaResponseSchema.parse((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json);
    expect(q.usage.bytes).toBeGreaterThan(used);
    expect(q.usage.bytes).toBeLessThanOrEqual(10_000);
    // A deletion gives its bytes back.
    expect((await push('s2', 1, 3)).status).toBe(201);
    const withS2 = QuotaResponseSchema.parse((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json).usage.bytes;
    expect((await alice.call('DELETE', '/v1/sessions/s1', { host: 'h' })).json).toMatchObject({ complete: true });
    const afterDelete = QuotaResponseSchema.parse((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json).usage;
    expect(afterDelete).toEqual({ bytes: withS2 - q.usage.bytes, sessions: 1 });
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10_000 })).json.usage.bytes).toBe(afterDelete.bytes);
    // Cleared with {}: the limit is gone.
    await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, {});
    expect((await push('s2', 2, 200)).status).toBe(201);
  });

  it('bad quota bodies are 400, a missing account 404, a user token 401', async () => {
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: -1 })).status).toBe(400);
    expect((await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { bytes: 1 })).status).toBe(400);
    expect((await admin.call('PUT', '/v1/admin/accounts/acct-missing/quota', { maxBytes: 1 })).status).toBe(404);
    expect((await alice.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 1 })).status).toBe(401);
    expect(await store.get(keys.quota(account))).toBeNull();
  });
});

describe('share housekeeping', () => {
  const share = (expiresInMs: number, session = 's1') =>
    alice.call('POST', '/v1/shares', { ciphertext: 'c2VjcmV0LWNpcGhlcnRleHQ', expiresAt: new Date(Date.now() + expiresInMs).toISOString(), session });

  async function record(token: string): Promise<Record<string, unknown>> {
    return JSON.parse(new TextDecoder().decode((await store.get(keys.share(await sha256Hex(token))))!.body));
  }

  it('an expired share loses its ciphertext and leaves the list when the list is read', async () => {
    const soon = (await share(HOUR)).json;
    const later = (await share(48 * HOUR)).json;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * HOUR);
    const list = (await alice.call('GET', '/v1/shares')).json.shares as { id: string }[];
    expect(list.map((s) => s.id)).toEqual([later.id]);
    expect(await record(soon.token)).not.toHaveProperty('ciphertext');
    expect(await store.get(keys.accountShare(account, soon.id))).toBeNull();
    expect(await store.get(keys.sessionShare(account, 's1', soon.id))).toBeNull();
    expect(await record(later.token)).toHaveProperty('ciphertext');
    const blob = await new TestClient(f).call('GET', `/v1/shares/${soon.token}/blob`);
    expect(blob.status).toBe(410);
    expect(blob.json.error.message).toMatch(/expired/);
  });

  it('an expired share read by its link loses its ciphertext there', async () => {
    const s = (await share(HOUR)).json;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * HOUR);
    expect((await new TestClient(f).call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
    expect(await record(s.token)).not.toHaveProperty('ciphertext');
    expect((await new TestClient(f).call('GET', `/v1/shares/${s.token}/blob`)).json.error.message).toMatch(/expired/);
  });
});
