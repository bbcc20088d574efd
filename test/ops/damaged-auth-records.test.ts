// A damaged token, token index, quota or usage record on the file store: a logged, non-retryable 422 corrupt (or a recount), never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureErrors, expectCorrupt } from './damaged-helpers.js';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor } from '../worker/routes-helpers.js';
import { http, startNodeRig, storedKeys, type NodeRig } from '../worker/node-rig.js';

const encoder = new TextEncoder();
const CUT = encoder.encode('{"account":"acct-0123456789ab'); // a write cut short
const NOT_A_TOKEN = encoder.encode('[1,2,3]');

let rig: NodeRig;
let admin: TestClient;
const logged = captureErrors();

beforeAll(async () => {
  rig = await startNodeRig();
  admin = new TestClient(http, TEST_ADMIN_SECRET, rig.url);
});
afterAll(() => rig.close());

/** A new token of the rig's account and the client that holds it. */
async function newToken(): Promise<{ token: string; id: string; hash: string; client: TestClient }> {
  const r = await admin.call('POST', `/v1/admin/accounts/${rig.account}/tokens`, {});
  expect(r.status).toBe(201);
  const token = r.json.token as string;
  return { token, id: r.json.id as string, hash: await sha256Hex(token), client: new TestClient(http, token, rig.url) };
}

describe('a damaged token record', () => {
  for (const [name, bytes] of [['cut short (not JSON)', CUT], ['JSON, but not a token record', NOT_A_TOKEN]] as const) {
    it(`${name}: the token's requests answer 422 corrupt, logged with the key; other tokens work; revoking it mends the record`, async () => {
      const t = await newToken();
      await rig.fs.put(keys.token(t.hash), bytes);
      const r = await t.client.call('GET', '/v1/whoami');
      expectCorrupt(r, /the token record stored on this server is damaged.*cannot tell whether the token is valid or revoked/);
      expect(logged.some((l) => l.includes(keys.token(t.hash)) && /damaged/.test(l))).toBe(true);
      // The server is up, the account's other token works, and lists the damaged one so that it can be revoked.
      const listed = await rig.alice.call('GET', '/v1/tokens');
      expect(listed.status).toBe(200);
      expect((listed.json.tokens as { id: string }[]).map((x) => x.id)).toContain(t.id);
      expect((await rig.alice.call('DELETE', `/v1/tokens/${t.id}`)).status).toBe(200);
      const after = await t.client.call('GET', '/v1/whoami');
      expect(after.status).toBe(401);
      expect(after.json.error.message).toMatch(/was revoked at/);
    });
  }
});

describe('a damaged token index record', () => {
  for (const [name, bytes] of [['cut short (not JSON)', CUT], ['JSON, but not an index record', NOT_A_TOKEN]] as const) {
    it(`${name}: the token is listed (own and admin list) from its token record, logged with both keys`, async () => {
      const t = await newToken();
      const indexKey = keys.accountToken(rig.account, t.id);
      await rig.fs.put(indexKey, bytes);
      for (const r of [await rig.alice.call('GET', '/v1/tokens'), await admin.call('GET', `/v1/admin/accounts/${rig.account}/tokens`)]) {
        expect(r.status).toBe(200);
        expect((r.json.tokens as { id: string }[]).map((x) => x.id)).toContain(t.id);
      }
      expect(logged.some((l) => l.includes(indexKey) && l.includes(keys.token(t.hash)))).toBe(true);
      // Still works until revoked: the list is how the user finds the id to revoke.
      expect((await t.client.call('GET', '/v1/whoami')).status).toBe(200);
      expect((await rig.alice.call('DELETE', `/v1/tokens/${t.id}`)).status).toBe(200);
    });
  }

  it('revoking it (own or admin route) revokes through the token record and drops the entry', async () => {
    for (const revoke of [
      (id: string) => rig.alice.call('DELETE', `/v1/tokens/${id}`),
      (id: string) => admin.call('DELETE', `/v1/admin/accounts/${rig.account}/tokens/${id}`),
    ]) {
      const t = await newToken();
      const indexKey = keys.accountToken(rig.account, t.id);
      await rig.fs.put(indexKey, CUT);
      expect((await revoke(t.id)).status).toBe(200);
      const after = await t.client.call('GET', '/v1/whoami');
      expect(after.status).toBe(401);
      expect(after.json.error.message).toMatch(/was revoked at/);
      expect(await rig.fs.get(indexKey)).toBeNull();
      const listed = await rig.alice.call('GET', '/v1/tokens');
      expect(listed.status).toBe(200);
      expect((listed.json.tokens as { id: string }[]).map((x) => x.id)).not.toContain(t.id);
    }
  });

  it('an entry whose record is gone too is left out of the list (logged), and revoking it is a 404', async () => {
    const t = await newToken();
    const indexKey = keys.accountToken(rig.account, t.id);
    await rig.fs.put(indexKey, CUT);
    await rig.fs.delete(keys.token(t.hash));
    try {
      const r = await rig.alice.call('GET', '/v1/tokens');
      expect(r.status).toBe(200);
      expect((r.json.tokens as { id: string }[]).map((x) => x.id)).not.toContain(t.id);
      expect(logged.some((l) => l.includes(indexKey) && /left out/.test(l))).toBe(true);
      expect((await rig.alice.call('DELETE', `/v1/tokens/${t.id}`)).status).toBe(404);
    } finally {
      await rig.fs.delete(indexKey);
    }
  });

  it("another account's token record is never taken for the damaged entry", async () => {
    const t = await newToken();
    const indexKey = keys.accountToken(rig.account, t.id);
    const rec = JSON.parse(new TextDecoder().decode((await rig.fs.get(keys.token(t.hash)))!.body));
    await rig.fs.put(keys.token(t.hash), encoder.encode(JSON.stringify({ ...rec, account: 'someone-else' })));
    await rig.fs.put(indexKey, CUT);
    try {
      expect((await rig.alice.call('GET', '/v1/tokens')).json.tokens.map((x: { id: string }) => x.id)).not.toContain(t.id);
      expect((await rig.alice.call('DELETE', `/v1/tokens/${t.id}`)).status).toBe(404);
      expect(JSON.parse(new TextDecoder().decode((await rig.fs.get(keys.token(t.hash)))!.body)).revoked).toBeUndefined();
    } finally {
      await rig.fs.delete(indexKey);
    }
  });
});

describe('a damaged quota record', () => {
  it('a push answers 422 corrupt (not a guess of "no quota"), and setting the quota again mends it', async () => {
    const quotaKey = keys.quota(rig.account);
    await rig.fs.put(quotaKey, CUT);
    const batch = await makeBatch({ session: 'sess-quota-damaged', host: 'h1', seq: 1, meta: metaFor('sess-quota-damaged') });
    const r = await rig.alice.push(batch);
    expectCorrupt(r, /the quota record of this account stored on this server is damaged.*sets its quota again/);
    expect(logged.some((l) => l.includes(quotaKey))).toBe(true);
    expect(await rig.fs.get(keys.head(rig.account, 'sess-quota-damaged', 'h1', 1))).toBeNull();
    expectCorrupt(await admin.call('GET', `/v1/admin/accounts/${rig.account}/quota`), /quota record/);
    expect((await admin.call('PUT', `/v1/admin/accounts/${rig.account}/quota`, { maxSessions: 10 })).status).toBe(200);
    expect((await rig.alice.push(batch)).status).toBe(201);
  });

  it('a damaged usage counter is logged and counted again: the push goes through and the counter is right', async () => {
    expect((await admin.call('PUT', `/v1/admin/accounts/${rig.account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    const counted = (await admin.call('GET', `/v1/admin/accounts/${rig.account}/quota`)).json.usage.bytes as number;
    await rig.fs.put(keys.usage(rig.account), encoder.encode('{"bytes":'));
    const batch = await makeBatch({ session: 'sess-usage-damaged', host: 'h1', seq: 1, meta: metaFor('sess-usage-damaged') });
    expect((await rig.alice.push(batch)).status).toBe(201);
    expect(logged.some((l) => l.includes(keys.usage(rig.account)))).toBe(true);
    const after = (await admin.call('GET', `/v1/admin/accounts/${rig.account}/quota`)).json.usage.bytes as number;
    expect(after).toBeGreaterThan(counted);
  });
});

describe('deleting a session while the quota record is damaged', () => {
  it('answers 200 and removes it all (batches gone, its share answers 410): the damage does not stop it half way', async () => {
    const session = 'sess-delete-damaged-quota';
    expect((await rig.alice.push(await makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session) }))).status).toBe(201);
    const share = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 86_400_000).toISOString(), session });
    expect(share.status).toBe(201);
    const anon = new TestClient(http, undefined, rig.url);
    expect((await anon.call('GET', `/v1/shares/${share.json.token}/blob`)).status).toBe(200);
    const quotaKey = keys.quota(rig.account);
    await rig.fs.put(quotaKey, CUT);
    try {
      const r = await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ session, complete: true, removed: 3, sharesRevoked: 1 });
      expect((await anon.call('GET', `/v1/shares/${share.json.token}/blob`)).status).toBe(410);
      expect(await storedKeys(rig.fs, keys.sessionPrefix(rig.account, session))).toEqual([]);
      expect((await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' })).json).toMatchObject({ complete: true, removed: 0 });
    } finally {
      expect((await admin.call('PUT', `/v1/admin/accounts/${rig.account}/quota`, {})).status).toBe(200);
    }
  });
});
