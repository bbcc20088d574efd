// A share whose index entry and share record are both damaged, over the real Node server on the file store: revoked by its id or its link when the account's own records lead there, and never another account's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureErrors, expectCorrupt } from './damaged-helpers.js';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor } from '../worker/routes-helpers.js';
import { http, startNodeRig, type NodeRig } from '../worker/node-rig.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NOT_A_RECORD = encoder.encode('[1,2,3]');
const DAY = 86_400_000;

let rig: NodeRig;
let anon: TestClient;
let bob: TestClient;
const logged = captureErrors();

beforeAll(async () => {
  rig = await startNodeRig();
  anon = new TestClient(http, undefined, rig.url);
  const made = await new TestClient(http, TEST_ADMIN_SECRET, rig.url).call('POST', '/v1/admin/accounts', { name: 'bob' });
  bob = new TestClient(http, made.json.token, rig.url);
});
afterAll(() => rig.close());

interface Share {
  token: string;
  id: string;
  hash: string;
  indexKey: string;
  recordKey: string;
}

async function newShare(client: TestClient, session?: string): Promise<Share> {
  const r = await client.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 7 * DAY).toISOString(), ...(session ? { session } : {}) });
  expect(r.status, r.text).toBe(201);
  const hash = await sha256Hex(r.json.token);
  return { token: r.json.token, id: r.json.id, hash, indexKey: keys.accountShare(rig.account, r.json.id), recordKey: keys.share(hash) };
}

/** The first `n` bytes of the record at `key` past the first `after`: a write cut there. */
async function cutAfter(key: string, after: string, n = 0): Promise<Uint8Array> {
  const whole = (await rig.fs.get(key))!.body;
  return whole.subarray(0, decoder.decode(whole).indexOf(after) + after.length + n);
}

async function listed(): Promise<{ shares: { id: string }[]; damaged: { id: string; revocableById: boolean; message: string }[] }> {
  const r = await rig.alice.call('GET', '/v1/shares');
  expect(r.status, r.text).toBe(200);
  return { shares: r.json.shares, damaged: r.json.damaged ?? [] };
}

const page = async (s: Share) => (await anon.call('GET', `/s/${s.token}`)).status;

describe('index entry and share record both damaged', () => {
  it('by its id: the entry still holds the hash, so the damaged record it names is replaced by the tombstone; the link answers 410', async () => {
    const s = await newShare(rig.alice);
    await rig.fs.put(s.indexKey, await cutAfter(s.indexKey, s.hash, 1));
    await rig.fs.put(s.recordKey, NOT_A_RECORD);
    expect(await page(s)).toBe(422);
    // Listed as revocable by its id, saying the link cannot open; by the link the server cannot tell whose it is.
    expect((await listed()).damaged).toContainEqual({ id: s.id, revocableById: true, message: expect.stringMatching(/both damaged, so its link cannot open.*sessync unshare/) });
    expectCorrupt(await rig.alice.call('DELETE', `/v1/shares/${s.token}`), /cannot tell from the link whose share it is.*Revoke it by its id if .sessync shares. lists it/);
    const r = await rig.alice.call('DELETE', `/v1/shares/${s.id}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ revoked: true, id: s.id });
    expect(await page(s)).toBe(410);
    const gone = await anon.call('GET', `/v1/shares/${s.token}/blob`);
    expect(gone.json.error.message).toMatch(/revoked by its owner/);
    expect(await rig.fs.get(s.indexKey)).toBeNull();
    expect((await listed()).damaged.map((d) => d.id)).not.toContain(s.id);
  });

  it('by its link: the record still names this account, so it is replaced by the tombstone and the damaged entry goes', async () => {
    const s = await newShare(rig.alice);
    await rig.fs.put(s.indexKey, NOT_A_RECORD);
    await rig.fs.put(s.recordKey, await cutAfter(s.recordKey, rig.account, 2));
    expect(await page(s)).toBe(422);
    expectCorrupt(await rig.alice.call('DELETE', `/v1/shares/${s.id}`), /cannot find the share's link from its id: revoke it by its link/);
    // Another account's token with the link is not its owner.
    expect((await bob.call('DELETE', `/v1/shares/${s.token}`)).status).toBe(404);
    expect(await page(s)).toBe(422);
    const r = await rig.alice.call('DELETE', `/v1/shares/${s.token}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ revoked: true, id: s.id });
    expect(await page(s)).toBe(410);
    expect(await rig.fs.get(s.indexKey)).toBeNull();
    expect(JSON.parse(decoder.decode((await rig.fs.get(s.recordKey))!.body))).toMatchObject({ id: s.id, account: rig.account, revoked: expect.any(String) });
  });

  it('by its link: the record names only its id, and the damaged entry of that id holds its hash', async () => {
    const s = await newShare(rig.alice);
    await rig.fs.put(s.indexKey, await cutAfter(s.indexKey, s.hash, 1));
    await rig.fs.put(s.recordKey, await cutAfter(s.recordKey, s.id, 2));
    const r = await rig.alice.call('DELETE', `/v1/shares/${s.token}`);
    expect(r.status, r.text).toBe(200);
    expect(await page(s)).toBe(410);
  });

  it('nothing of either says whose it is: both ways say truthfully that the link cannot open, and to ask the admin', async () => {
    const s = await newShare(rig.alice);
    await rig.fs.put(s.indexKey, NOT_A_RECORD);
    await rig.fs.put(s.recordKey, NOT_A_RECORD);
    expect(await page(s)).toBe(422);
    expect((await listed()).damaged).toContainEqual({ id: s.id, revocableById: false, message: expect.stringMatching(/ask the server's admin/) });
    expectCorrupt(await rig.alice.call('DELETE', `/v1/shares/${s.id}`), /revoke it by its link.*or ask the server's admin/);
    expectCorrupt(await rig.alice.call('DELETE', `/v1/shares/${s.token}`), /the link cannot open.*only the server's admin can remove the record/);
    expect(logged.some((l) => l.includes(s.recordKey) && /not revoked/.test(l))).toBe(true);
    expect(await page(s)).toBe(422);
    // What the admin would do, so the suite's later lists are not about this share.
    await rig.fs.delete(s.indexKey);
    await rig.fs.delete(s.recordKey);
  });
});

describe("a damaged entry never leads to another account's share", () => {
  it("an entry under bob's share id holding bob's hash neither revokes bob's share nor shows its dates", async () => {
    const theirs = await newShare(bob);
    // Crafted: alice's index holds an entry of bob's share id whose damaged bytes name bob's record (sound, of that id).
    const aliceKey = keys.accountShare(rig.account, theirs.id);
    await rig.fs.put(aliceKey, encoder.encode(`{"id":"${theirs.id}","tokenHash":"${theirs.hash}","cr`));
    expect((await listed()).damaged).toContainEqual({ id: theirs.id, revocableById: false, message: expect.any(String) });
    const r = await rig.alice.call('DELETE', `/v1/shares/${theirs.id}`);
    expect(r.status).toBe(422);
    expect((await anon.call('GET', `/v1/shares/${theirs.token}/blob`)).status).toBe(200);
    expect(JSON.parse(decoder.decode((await rig.fs.get(theirs.recordKey))!.body))).toMatchObject({ account: expect.not.stringMatching(rig.account), ciphertext: 'Y2lwaGVy' });
    // Nor through a session of alice's that points there.
    const session = 'sess-crafted-pointer';
    expect((await rig.alice.push(await makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session) }))).status).toBe(201);
    await rig.fs.put(keys.sessionShare(rig.account, session, theirs.id), encoder.encode(`{"id":"${theirs.id}","tokenHash":"${theirs.hash}"`));
    const del = await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
    expect(del.json).toMatchObject({ complete: true, sharesRevoked: 0 });
    expect((await anon.call('GET', `/v1/shares/${theirs.token}/blob`)).status).toBe(200);
    await rig.fs.delete(aliceKey);
  });
});

describe('what makes a damaged record that names nothing safe to replace through an entry of this account', () => {
  it("no request puts a hash or an id of its choosing into the caller's index: a share's entry holds the hash of the token it was given", async () => {
    const theirs = await newShare(bob);
    const before = (await listed()).damaged.length + (await listed()).shares.length;
    // Naming bob's share (its hash, its id) in a request of alice's is refused, and stores nothing.
    for (const extra of [{ tokenHash: theirs.hash }, { id: theirs.id }, { token: theirs.token }, { account: 'bob' }]) {
      const r = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + DAY).toISOString(), ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
    }
    expect((await listed()).damaged.length + (await listed()).shares.length).toBe(before);
    expect(await rig.fs.get(keys.accountShare(rig.account, theirs.id))).toBeNull();
    // What is stored is the server's own: a fresh id, and the hash of the token it answered with.
    const mine = await newShare(rig.alice);
    expect(JSON.parse(decoder.decode((await rig.fs.get(mine.indexKey))!.body))).toMatchObject({ id: mine.id, tokenHash: mine.hash });
    await rig.alice.call('DELETE', `/v1/shares/${mine.id}`);
  });
});

describe('revoking an already revoked share through its damaged entry', () => {
  it('keeps what its tombstone says: a deleted session\'s share still answers that its session was deleted', async () => {
    const session = 'sess-revoked-then-damaged';
    expect((await rig.alice.push(await makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session) }))).status).toBe(201);
    const s = await newShare(rig.alice, session);
    const entry = (await rig.fs.get(s.indexKey))!.body;
    expect((await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' })).json).toMatchObject({ complete: true, sharesRevoked: 1 });
    // An entry left behind damaged (a removal lost in a crash, then a disk fault): still listed, revoked by its id.
    await rig.fs.put(s.indexKey, entry.subarray(0, decoder.decode(entry).indexOf(s.hash) + 66));
    expect((await listed()).damaged).toContainEqual(expect.objectContaining({ id: s.id, revoked: true, revocableById: true }));
    expect((await rig.alice.call('DELETE', `/v1/shares/${s.id}`)).status).toBe(200);
    expect(await rig.fs.get(s.indexKey)).toBeNull();
    const gone = await anon.call('GET', `/v1/shares/${s.token}/blob`);
    expect(gone.status).toBe(410);
    expect(gone.json.error.message).toMatch(/session of this share was deleted/);
  });
});
