// Deleting a session whose share pointer is damaged, over the real Node server on the file store and the memory store: it finishes, and no share stays live unsaid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureErrors } from './damaged-helpers.js';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { TestClient, makeBatch, metaFor } from '../worker/routes-helpers.js';
import { http, startNodeRig, storedKeys, type NodeRig } from '../worker/node-rig.js';
import { ApiClient } from '../../cli/api-client.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const DAY = 86_400_000;
/** Damage that keeps nothing of the record: a write cut before the hash, or bytes that are not one. */
const CUT = encoder.encode('{"id":"abcdefghij');
const NOT_A_RECORD = encoder.encode('[1,2,3]');
/** JSON, but its hash is not one: the key built from it would be refused (a 400 on main). */
const BAD_HASH = encoder.encode('{"id":"x","tokenHash":"not-a-hash"}');

const backends: [string, () => Promise<{ rig: NodeRig; store: BlobStore }>][] = [
  ['file store', async () => { const rig = await startNodeRig(); return { rig, store: rig.fs }; }],
  ['memory store', async () => { const store = new MemoryStore(); return { rig: await startNodeRig(() => store), store }; }],
];

describe.each(backends)('a damaged share pointer of a session being deleted (%s)', (_name, start) => {
  let rig: NodeRig;
  let store: BlobStore;
  let anon: TestClient;
  const logged = captureErrors();
  let n = 0;

  beforeAll(async () => {
    ({ rig, store } = await start());
    anon = new TestClient(http, undefined, rig.url);
  });
  afterAll(() => rig.close());

  /** A pushed session with one share of it (and a share of nothing, which must stay untouched). */
  async function sessionWithShare(): Promise<{ session: string; token: string; id: string; hash: string; pointerKey: string; indexKey: string; other: string }> {
    const session = `sess-ptr-${++n}`;
    expect((await rig.alice.push(await makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session) }))).status).toBe(201);
    const make = async (s?: string) => {
      const r = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 7 * DAY).toISOString(), ...(s ? { session: s } : {}) });
      expect(r.status, r.text).toBe(201);
      return r.json as { token: string; id: string };
    };
    const s = await make(session);
    const other = await make();
    return { session, ...s, hash: await sha256Hex(s.token), pointerKey: keys.sessionShare(rig.account, session, s.id), indexKey: keys.accountShare(rig.account, s.id), other: other.token };
  }

  /** Deletes it: the deletion must finish, leave nothing of the session, and leave the share of nothing alone. */
  async function deleteSession({ session, other }: { session: string; other: string }): Promise<any> {
    const r = await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ session, complete: true });
    expect(await storedKeys(store, keys.sessionPrefix(rig.account, session))).toEqual([]);
    expect((await anon.call('GET', `/v1/shares/${other}/blob`)).status).toBe(200);
    return r.json;
  }

  for (const [name, bytes] of [['cut short', CUT], ['not a pointer', NOT_A_RECORD], ['a hash that is not one', BAD_HASH]] as const) {
    it(`${name}: the share is found by the pointer's id through its index entry and revoked; the deletion finishes`, async () => {
      const s = await sessionWithShare();
      await store.put(s.pointerKey, bytes);
      const r = await deleteSession(s);
      expect(r).toMatchObject({ sharesRevoked: 1 });
      expect(r.sharesNotRevoked).toBeUndefined();
      const gone = await anon.call('GET', `/v1/shares/${s.token}/blob`);
      expect(gone.status).toBe(410);
      expect(gone.json.error.message).toMatch(/session of this share was deleted/);
      expect(await store.get(s.indexKey)).toBeNull();
      expect(logged.some((l) => l.includes(s.pointerKey) && /damaged/.test(l))).toBe(true);
    });
  }

  it('pointer and index entry both damaged, the entry cut after its hash: the hash, confirmed by the share record, revokes it', async () => {
    const s = await sessionWithShare();
    const index = (await store.get(s.indexKey))!.body;
    const cut = index.subarray(0, decoder.decode(index).indexOf(s.hash) + 70);
    await store.put(s.indexKey, cut);
    await store.put(s.pointerKey, CUT);
    const r = await deleteSession(s);
    expect(r).toMatchObject({ sharesRevoked: 1 });
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
    expect(await store.get(s.indexKey)).toBeNull();
  });

  it('pointer cut after its hash, index entry damaged beyond use: the hash in the pointer, confirmed by the share record, revokes it', async () => {
    const s = await sessionWithShare();
    const pointer = (await store.get(s.pointerKey))!.body;
    await store.put(s.pointerKey, pointer.subarray(0, decoder.decode(pointer).indexOf(s.hash) + 65));
    await store.put(s.indexKey, NOT_A_RECORD);
    const r = await deleteSession(s);
    expect(r).toMatchObject({ sharesRevoked: 1 });
    expect(r.sharesNotRevoked).toBeUndefined();
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
    expect(await store.get(s.indexKey)).toBeNull();
  });

  it("a hash in the damaged bytes that names another share is not taken: that share stays live, this one is reported", async () => {
    const s = await sessionWithShare();
    // The pointer names the other share's hash (someone else's, as far as this pointer knows): it must not be revoked.
    await store.put(s.pointerKey, encoder.encode(`{"id":"zz","tokenHash":"${await sha256Hex(s.other)}"`));
    await store.put(s.indexKey, NOT_A_RECORD);
    const r = await deleteSession(s);
    expect(r.sharesNotRevoked).toEqual([{ id: s.id, message: expect.stringMatching(/could not be revoked.*may still open.*sessync unshare <link>.*sessync shares. lists it as damaged/) }]);
  });

  it('pointer and index entry both damaged beyond use: the deletion finishes and names the share it could not revoke; its link revokes it', async () => {
    const s = await sessionWithShare();
    await store.put(s.pointerKey, CUT);
    await store.put(s.indexKey, NOT_A_RECORD);
    const r = await deleteSession(s);
    expect(r).toMatchObject({ sharesRevoked: 0 });
    expect(r.sharesNotRevoked).toEqual([{ id: s.id, message: expect.stringMatching(new RegExp(`share ${s.id} of session ${s.session} could not be revoked.*sessync unshare <link>`)) }]);
    expect(logged.some((l) => l.includes(s.pointerKey) && l.includes(s.indexKey) && /could not be revoked/.test(l))).toBe(true);
    // What the message says works: the owner revokes it by its link.
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(200);
    expect((await rig.alice.call('DELETE', `/v1/shares/${s.token}`)).status).toBe(200);
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
  });

  /** Its making cut between its index entry and its share record, and the entry cut after the hash: a link that never opened. */
  async function neverLive(s: { hash: string; indexKey: string }): Promise<void> {
    await store.delete(keys.share(s.hash));
    const index = (await store.get(s.indexKey))!.body;
    await store.put(s.indexKey, index.subarray(0, decoder.decode(index).indexOf(s.hash) + 65));
  }

  it('index entry cut after its hash, no share record there (its making cut short), pointer damaged: the deletion removes it, no warning', async () => {
    const s = await sessionWithShare();
    await neverLive(s);
    await store.put(s.pointerKey, CUT);
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(404);
    const r = await deleteSession(s);
    expect(r).toMatchObject({ sharesRevoked: 1 });
    expect(r.sharesNotRevoked).toBeUndefined();
    expect(r.sharesStillUnrevoked).toBeUndefined();
    expect(await store.get(s.indexKey)).toBeNull();
    expect((await rig.alice.call('GET', '/v1/shares')).json.damaged ?? []).not.toContainEqual(expect.objectContaining({ id: s.id }));
  });

  it('a pointer cut after a hash with no share record, its index entry sound: the live share the entry names is revoked', async () => {
    const s = await sessionWithShare();
    await store.put(s.pointerKey, encoder.encode(`{"id":"${s.id}","tokenHash":"${await sha256Hex('a token never issued')}"`));
    const r = await deleteSession(s);
    expect(r).toMatchObject({ sharesRevoked: 1 });
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
    expect(await store.get(s.indexKey)).toBeNull();
  });

  it('the same entry in the share list: it says the link never opened, and revoking by id removes it', async () => {
    const s = await sessionWithShare();
    await neverLive(s);
    const listed = (await rig.alice.call('GET', '/v1/shares')).json.damaged as { id: string; revocableById: boolean; message: string }[];
    expect(listed).toContainEqual({ id: s.id, revocableById: true, message: expect.stringMatching(new RegExp(`never opened.*sessync unshare ${s.id}`)) });
    expect((await rig.alice.call('DELETE', `/v1/shares/${s.id}`)).status).toBe(200);
    expect(await store.get(s.indexKey)).toBeNull();
    expect((await rig.alice.call('GET', '/v1/shares')).json.damaged ?? []).not.toContainEqual(expect.objectContaining({ id: s.id }));
  });

  it('a share the deletion could not revoke that expires: opening its link purges it, and no answer names it any more', async () => {
    const s = await sessionWithShare();
    await store.put(s.pointerKey, CUT);
    await store.put(s.indexKey, NOT_A_RECORD);
    expect((await deleteSession(s)).sharesNotRevoked?.map((x: { id: string }) => x.id)).toEqual([s.id]);
    // It expires (its record says so), and its link is opened: the purge removes its ciphertext and its index entry.
    const recordKey = keys.share(s.hash);
    const rec = JSON.parse(decoder.decode((await store.get(recordKey))!.body));
    await store.put(recordKey, encoder.encode(JSON.stringify({ ...rec, expiresAt: new Date(Date.now() - 1000).toISOString() })));
    expect((await anon.call('GET', `/v1/shares/${s.token}/blob`)).status).toBe(410);
    expect(await store.get(s.indexKey)).toBeNull();
    // Nothing could find the share to clear its note now (its link answers 404 to a revocation): the purge cleared it.
    expect(await storedKeys(store, keys.sessionUnrevokedPrefix(rig.account, s.session))).toEqual([]);
    const again = await rig.alice.call('DELETE', `/v1/sessions/${s.session}`, { host: 'h1' });
    expect(again.json).toMatchObject({ complete: true });
    expect(again.json.sharesStillUnrevoked).toBeUndefined();
  });

  /** A session with 8 shares whose pointers and index entries are damaged beyond use: more than one step's worth. */
  async function sessionOfLostShares(): Promise<{ session: string; lost: string[] }> {
    const s = await sessionWithShare();
    const lost = [s.id];
    for (let i = 0; i < 7; i++) {
      const r = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 7 * DAY).toISOString(), session: s.session });
      lost.push(r.json.id);
    }
    for (const id of lost) {
      await store.put(keys.sessionShare(rig.account, s.session, id), CUT);
      await store.put(keys.accountShare(rig.account, id), NOT_A_RECORD);
    }
    return { session: s.session, lost: lost.sort() };
  }

  it("many shares beyond use: the CLI's client goes on through steps that only find shares they cannot revoke, and names each once, on a rerun too", async () => {
    const { session, lost } = await sessionOfLostShares();
    const client = new ApiClient({ url: rig.url, token: rig.alice.token!, retries: 0 });
    const r = await client.deleteSession(session, 'h1');
    // More steps than one, the first finding nothing but shares it could not revoke (no object removed, none revoked).
    expect(r.steps).toBeGreaterThanOrEqual(2);
    expect(r).toMatchObject({ complete: true, sharesRevoked: 0 });
    expect(r.sharesNotRevoked?.map((x) => x.id).sort()).toEqual(lost);
    expect(await storedKeys(store, keys.sessionPrefix(rig.account, session))).toEqual([]);
    // Run again (as after a lost answer): every one named again, each once.
    const again = await client.deleteSession(session, 'h1');
    expect(again).toMatchObject({ complete: true, steps: 1, removed: 0 });
    expect(again.sharesNotRevoked?.map((x) => x.id).sort()).toEqual(lost);
  });

  it('many shares beyond use: a client from before the notes (its step loop, as it was at c6e5df8) makes progress to the end and hears of each share once', async () => {
    const { session, lost } = await sessionOfLostShares();
    // That client's deleteSession: it adds up each answer's sharesNotRevoked, and stops on a step that is not
    // complete and removed and revoked nothing.
    const named: string[] = [];
    for (let steps = 1; ; steps++) {
      const step = await rig.alice.call('DELETE', `/v1/sessions/${session}`, { host: 'h1' });
      expect(step.status, step.text).toBe(200);
      const d = step.json as { complete: boolean; removed: number; sharesRevoked: number; sharesNotRevoked?: { id: string }[] };
      named.push(...(d.sharesNotRevoked ?? []).map((x) => x.id));
      if (d.complete) break;
      expect(d.removed === 0 && d.sharesRevoked === 0, `step ${steps} made no progress for that client: ${step.text}`).toBe(false);
      expect(steps).toBeLessThan(10);
    }
    expect(named.sort()).toEqual(lost);
    expect(await storedKeys(store, keys.sessionPrefix(rig.account, session))).toEqual([]);
  });
});
