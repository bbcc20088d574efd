// A damaged share record or share index entry on the file store (a logged, non-retryable 422 corrupt, listed, and still revocable), and seals over a damaged quota record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureErrors, expectCorrupt } from './damaged-helpers.js';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import { decodeBatchRecord, isDamaged } from '../../worker/session-data.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor } from '../worker/routes-helpers.js';
import { putAccountKey, sealOf, sealPath } from '../worker/sealed-helpers.js';
import { http, startNodeRig, storedKeys, type NodeRig } from '../worker/node-rig.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CUT = encoder.encode('{"id":"abcdefghijklmnop","acc'); // a write cut short
const NOT_A_RECORD = encoder.encode('[1,2,3]');
const DAY = 86_400_000;

let rig: NodeRig;
let admin: TestClient;
let anon: TestClient;
const logged = captureErrors();

beforeAll(async () => {
  rig = await startNodeRig();
  admin = new TestClient(http, TEST_ADMIN_SECRET, rig.url);
  anon = new TestClient(http, undefined, rig.url);
});
afterAll(() => rig.close());

async function newShare(session?: string): Promise<{ token: string; id: string; hash: string }> {
  const r = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 7 * DAY).toISOString(), ...(session ? { session } : {}) });
  expect(r.status, r.text).toBe(201);
  return { token: r.json.token, id: r.json.id, hash: await sha256Hex(r.json.token) };
}

async function listedIds(): Promise<string[]> {
  const r = await rig.alice.call('GET', '/v1/shares');
  expect(r.status, r.text).toBe(200);
  return (r.json.shares as { id: string }[]).map((s) => s.id);
}

async function listedDamaged(): Promise<unknown[]> {
  const r = await rig.alice.call('GET', '/v1/shares');
  expect(r.status, r.text).toBe(200);
  return r.json.damaged ?? [];
}

describe('a damaged share record', () => {
  for (const [name, bytes] of [['cut short (not JSON)', CUT], ['JSON, but not a share record', NOT_A_RECORD]] as const) {
    it(`${name}: its link answers 422 corrupt (logged with the key), it stays listed, and revoking it by id replaces the record`, async () => {
      const s = await newShare();
      const other = await newShare();
      await rig.fs.put(keys.share(s.hash), bytes);
      expectCorrupt(await anon.call('GET', `/v1/shares/${s.token}/blob`), /the share record stored on this server is damaged.*revoke it by its id/);
      expect(logged.some((l) => l.includes(keys.share(s.hash)) && /damaged/.test(l))).toBe(true);
      expect((await anon.call('GET', `/s/${s.token}`)).status).toBe(422);
      expect((await anon.call('GET', `/v1/shares/${other.token}/blob`)).status).toBe(200);
      expect(await listedIds()).toEqual(expect.arrayContaining([s.id, other.id]));
      // By the link the server cannot tell whose share it is (no record it names says): it says to use the id.
      expectCorrupt(await rig.alice.call('DELETE', `/v1/shares/${s.token}`), /cannot tell from the link whose share it is: the link cannot open.*Revoke it by its id if .sessync shares. lists it/);
      const revoked = await rig.alice.call('DELETE', `/v1/shares/${s.id}`);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.json).toMatchObject({ revoked: true, id: s.id });
      const gone = await anon.call('GET', `/v1/shares/${s.token}/blob`);
      expect(gone.status).toBe(410);
      expect(gone.json.error.message).toMatch(/revoked by its owner/);
      expect(await listedIds()).not.toContain(s.id);
      expect(JSON.parse(decoder.decode((await rig.fs.get(keys.share(s.hash)))!.body))).toMatchObject({ id: s.id, revoked: expect.any(String) });
    });
  }

  it('deleting its session finishes (200) and replaces the record: the link answers 410', async () => {
    const session = 'sess-damaged-share';
    expect((await rig.alice.push(await makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session) }))).status).toBe(201);
    const s = await newShare(session);
    await rig.fs.put(keys.share(s.hash), CUT);
    const r = await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ session, complete: true, sharesRevoked: 1 });
    const gone = await anon.call('GET', `/v1/shares/${s.token}/blob`);
    expect(gone.status).toBe(410);
    expect(gone.json.error.message).toMatch(/session of this share was deleted/);
    expect(await storedKeys(rig.fs, keys.sessionPrefix(rig.account, session))).toEqual([]);
  });
});

describe('a damaged share index entry', () => {
  for (const [name, bytes] of [['cut short (not JSON)', CUT], ['JSON, but not an index record', NOT_A_RECORD]] as const) {
    it(`${name}: the other shares are listed, it is listed as damaged (logged); by id 422 corrupt, by its link it is revoked`, async () => {
      const s = await newShare('sess-index-damaged');
      const other = await newShare();
      const indexKey = keys.accountShare(rig.account, s.id);
      await rig.fs.put(indexKey, bytes);
      const ids = await listedIds();
      expect(ids).toContain(other.id);
      expect(ids).not.toContain(s.id);
      expect(await listedDamaged()).toEqual([{ id: s.id, revocableById: false, message: expect.stringMatching(/cannot find its link.*may still open.*revoke it by the link/) }]);
      expect(logged.some((l) => l.includes(indexKey) && /listed as damaged/.test(l))).toBe(true);
      // Its link still works until it is revoked.
      expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(200);
      expectCorrupt(await rig.alice.call('DELETE', `/v1/shares/${s.id}`), /share index record stored on this server is damaged.*revoke it by its link/);
      // Another account's token cannot revoke it through the fallback.
      const bob = await admin.call('POST', '/v1/admin/accounts', { name: 'bob' });
      expect((await new TestClient(http, bob.json.token, rig.url).call('DELETE', `/v1/shares/${s.token}`)).status).toBe(404);
      const revoked = await rig.alice.call('DELETE', `/v1/shares/${s.token}`);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.json).toMatchObject({ revoked: true, id: s.id });
      expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
      expect(await rig.fs.get(indexKey)).toBeNull();
      expect(logged.some((l) => l.includes(indexKey) && l.includes(keys.share(s.hash)))).toBe(true);
      expect(await listedIds()).toContain(other.id);
      expect(await listedDamaged()).toEqual([]);
    });
  }

  it('cut after its token hash: listed as damaged with its share record\'s dates, and revoked by its id', async () => {
    const s = await newShare('sess-index-cut-late');
    const indexKey = keys.accountShare(rig.account, s.id);
    const whole = (await rig.fs.get(indexKey))!.body;
    await rig.fs.put(indexKey, whole.subarray(0, decoder.decode(whole).indexOf(s.hash) + 66));
    const [d] = await listedDamaged();
    expect(d).toEqual({ id: s.id, created: expect.any(String), expiresAt: expect.any(String), revoked: false, revocableById: true, message: expect.stringMatching(new RegExp(`sessync unshare ${s.id}. revokes it`)) });
    const revoked = await rig.alice.call('DELETE', `/v1/shares/${s.id}`);
    expect(revoked.status, revoked.text).toBe(200);
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
    expect(await listedDamaged()).toEqual([]);
  });
});

describe('sealing over a damaged quota record', () => {
  it('a batch seal passes (logged) as it passes over quota, the usage counter follows, and plain pushes stay refused', async () => {
    const created = await admin.call('POST', '/v1/admin/accounts', { name: 'converting' });
    const account = created.json.account as string;
    const client = new TestClient(http, created.json.token, rig.url);
    const session = 'sess-seal-damaged-quota';
    const batch = await makeBatch({ session, host: 'h1', seq: 1, count: 20, meta: metaFor(session) });
    expect((await client.push(batch)).status).toBe(201);
    const set = await admin.call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10_000_000 });
    expect(set.status, set.text).toBe(200);
    const counted = set.json.usage.bytes as number;
    const quotaKey = keys.quota(account);
    await rig.fs.put(quotaKey, CUT);
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    const sealed = await sealOf(batch);
    const r = await client.call('PUT', sealPath(session, 'h1', 1), sealed);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 'sealed', session, host: 'h1', seq: 1 });
    const stored = decodeBatchRecord((await rig.fs.get(keys.batch(account, session, 'h1', 1)))!.body);
    expect(isDamaged(stored) ? stored.damaged : stored.envelope.encoding).toBe('aes-256-gcm');
    expect(logged.some((l) => l.includes(quotaKey))).toBe(true);
    expect(logged.some((l) => /sealing batch 1 of host h1.*over its damaged quota record/.test(l))).toBe(true);
    // The counter follows the seal's growth, so the quota set again later starts from the truth either way.
    const usage = JSON.parse(decoder.decode((await rig.fs.get(keys.usage(account)))!.body)).bytes as number;
    expect(usage).toBe(counted + sealed.body.length - batch.body.length);
    // The damage still refuses what is not a seal.
    const next = await makeBatch({ session, host: 'h1', seq: 2, meta: metaFor(session) });
    expect((await client.push(next)).status).not.toBe(201);
  });
});
