// A damaged token, token index, quota or usage record on the file store: a logged, non-retryable 422 corrupt (or a recount), never a 500.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor } from '../worker/routes-helpers.js';
import { http, startNodeRig, type NodeRig } from '../worker/node-rig.js';

const encoder = new TextEncoder();
const CUT = encoder.encode('{"account":"acct-0123456789ab'); // a write cut short
const NOT_A_TOKEN = encoder.encode('[1,2,3]');

let rig: NodeRig;
let admin: TestClient;
let logged: string[];
const origError = console.error;

beforeAll(async () => {
  rig = await startNodeRig();
  admin = new TestClient(http, TEST_ADMIN_SECRET, rig.url);
});
afterAll(() => rig.close());
beforeEach(() => {
  logged = [];
  console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
});
afterEach(() => {
  console.error = origError;
});

/** A new token of the rig's account and the client that holds it. */
async function newToken(): Promise<{ token: string; id: string; hash: string; client: TestClient }> {
  const r = await admin.call('POST', `/v1/admin/accounts/${rig.account}/tokens`, {});
  expect(r.status).toBe(201);
  const token = r.json.token as string;
  return { token, id: r.json.id as string, hash: await sha256Hex(token), client: new TestClient(http, token, rig.url) };
}

function expectCorrupt(r: { status: number; json: any }, what: RegExp): void {
  expect(r.status).toBe(422);
  expect(r.json.error).toMatchObject({ code: 'corrupt', retryable: false });
  expect(r.json.error.message).toMatch(what);
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
  it('listing the tokens answers 422 corrupt naming the index, logged with its key', async () => {
    const t = await newToken();
    const indexKey = keys.accountToken(rig.account, t.id);
    const good = (await rig.fs.get(indexKey))!.body;
    await rig.fs.put(indexKey, CUT);
    try {
      const r = await rig.alice.call('GET', '/v1/tokens');
      expectCorrupt(r, /the token index record stored on this server is damaged/);
      expect(logged.some((l) => l.includes(indexKey))).toBe(true);
    } finally {
      await rig.fs.put(indexKey, good);
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
