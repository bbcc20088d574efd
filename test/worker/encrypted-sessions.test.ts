// An encrypted account through the real Node server: what a push may carry, the sealed meta, re-wrapping, sealing in place, quota.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { PushBatchResponseSchema, SessionMetaResponseSchema } from '../../shared/wire.js';
import { startNodeRig, http, type NodeRig } from './node-rig.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor, storeSnapshot } from './routes-helpers.js';
import { makeSealedBatch, putAccountKey, randomBase64, randomHex64, sealOf, sealPath, sealedMeta } from './sealed-helpers.js';

let rig: NodeRig;
const admin = () => new TestClient(http, TEST_ADMIN_SECRET, rig.url);

beforeAll(async () => {
  rig = await startNodeRig();
});
afterAll(() => rig?.close());

async function newAccount(keyId?: string): Promise<{ client: TestClient; account: string }> {
  const r = await admin().call('POST', '/v1/admin/accounts', { name: 'e2e test' });
  expect(r.status, r.text).toBe(201);
  const client = new TestClient(http, r.json.token, rig.url);
  if (keyId) expect((await putAccountKey(client, keyId)).status).toBe(200);
  return { client, account: r.json.account };
}

describe('pushes to an encrypted account', () => {
  it('takes aes-256-gcm batches with sealed meta, and serves the meta sealed: no header, cwd or name', async () => {
    const { client } = await newAccount('k1');
    const meta = sealedMeta('k1', { projectKey: randomHex64() });
    const first = await client.push(await makeSealedBatch({ session: 'e1', host: 'h', seq: 1, meta }));
    expect(first.status, first.text).toBe(201);
    expect(PushBatchResponseSchema.parse(first.json).metaMismatch).toBeUndefined();
    expect((await client.push(await makeSealedBatch({ session: 'e1', host: 'h', seq: 2 }))).status).toBe(201);
    const got = SessionMetaResponseSchema.parse((await client.call('GET', '/v1/sessions/e1')).json);
    expect(got).toMatchObject({ session: 'e1', sealed: meta.sealed, projectKey: meta.projectKey, hosts: { h: 2 } });
    expect(got.header).toBeUndefined();
    expect(got.cwd).toBeUndefined();
    expect(got.name).toBeUndefined();
  });

  it('a plaintext account still takes ciphertext batches with a plaintext meta, as before', async () => {
    const { client } = await newAccount();
    const r = await client.push(await makeSealedBatch({ session: 'c1', host: 'h', seq: 1, meta: metaFor('c1') }));
    expect(r.status, r.text).toBe(201);
  });

  it('the same session id under another data key: entries are refused before any write, an empty announcement is stored and flagged metaMismatch', async () => {
    const { client } = await newAccount('k1');
    const mine = sealedMeta('k1');
    expect((await client.push(await makeSealedBatch({ session: 'twin', host: 'a', seq: 1, meta: mine }))).status).toBe(201);
    // Entries sealed under another key than the stored meta's: nobody else could read them, so nothing is stored.
    const before = await storeSnapshot(rig.fs);
    const refused = await client.push(await makeSealedBatch({ session: 'twin', host: 'b', seq: 1, meta: sealedMeta('k1') }));
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'conflict', details: { metaMismatch: true } });
    expect(await storeSnapshot(rig.fs)).toEqual(before);
    // An older client announces a session by an empty batch with its meta: stored, and told whose key won.
    const theirs = await client.push(await makeSealedBatch({ session: 'twin', host: 'b', seq: 1, count: 0, meta: sealedMeta('k1') }));
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.json.metaMismatch).toBe(true);
    // The same meta again (a client sends it with every push) is no mismatch.
    const again = await client.push(await makeSealedBatch({ session: 'twin', host: 'a', seq: 2, meta: mine }));
    expect(again.json.metaMismatch).toBeUndefined();
    expect((await client.call('GET', '/v1/sessions/twin')).json.sealed).toEqual(mine.sealed);
  });

  it('after the account key PUT, a plaintext push is refused (no downgrade) and stores nothing', async () => {
    const { client } = await newAccount();
    expect((await client.push(await makeBatch({ session: 'p', host: 'h', seq: 1, meta: metaFor('p') }))).status).toBe(201);
    await putAccountKey(client, 'k1');
    const before = await storeSnapshot(rig.fs);
    const r = await client.push(await makeBatch({ session: 'p', host: 'h', seq: 2 }));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'encryption_required', retryable: false });
    expect(await storeSnapshot(rig.fs)).toEqual(before);
  });
});

describe('re-wrapping session keys on rotation: PUT /v1/sessions/:session/key', () => {
  it('moves the session to the new key, changes nothing else, and a re-run answers 200', async () => {
    const { client, account } = await newAccount('k1');
    const meta = sealedMeta('k1');
    await client.push(await makeSealedBatch({ session: 'r1', host: 'h', seq: 1, meta }));
    await putAccountKey(client, 'k2', 'k1');
    const batchBefore = await rig.fs.get(keys.batch(account, 'r1', 'h', 1));
    const wrappedKey = randomBase64(40);
    const r = await client.call('PUT', '/v1/sessions/r1/key', { keyId: 'k2', wrappedKey, replaces: 'k1' });
    expect(r.status, r.text).toBe(200);
    expect(SessionMetaResponseSchema.parse(r.json).sealed).toEqual({ keyId: 'k2', wrappedKey, ciphertext: meta.sealed.ciphertext });
    expect((await client.call('GET', '/v1/sessions/r1')).json).toEqual(r.json);
    const rerun = await client.call('PUT', '/v1/sessions/r1/key', { keyId: 'k2', wrappedKey, replaces: 'k1' });
    expect(rerun.status).toBe(200);
    expect(rerun.json).toEqual(r.json);
    expect((await rig.fs.get(keys.batch(account, 'r1', 'h', 1)))!.etag).toBe(batchBefore!.etag);
  });

  it('a push with a meta under the retired key is told to import the new one', async () => {
    const { client } = await newAccount('k1');
    await putAccountKey(client, 'k2', 'k1');
    const r = await client.push(await makeSealedBatch({ session: 'old', host: 'h', seq: 1, meta: sealedMeta('k1') }));
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('key_mismatch');
    expect(r.json.error.message).toMatch(/rotated to k2: run `sessync key import`/);
  });
});

describe('converting a plaintext account: the seal routes', () => {
  it('seals batches and meta in place: heads and seqs unchanged, pulls serve ciphertext, re-runs answer 200', async () => {
    const { client, account } = await newAccount();
    const pushed = [];
    for (const seq of [1, 2]) {
      const b = await makeBatch({ session: 'conv', host: 'h', seq, meta: metaFor('conv') });
      pushed.push(b);
      expect((await client.push(b)).status).toBe(201);
    }
    const headsBefore = (await client.call('GET', '/v1/changes')).json;
    await putAccountKey(client, 'k1');
    for (const b of pushed) {
      const seal = await sealOf(b);
      const r = await client.call('PUT', sealPath('conv', 'h', b.envelope.seq), seal);
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ status: 'sealed', session: 'conv', host: 'h', seq: b.envelope.seq });
      expect((await client.call('PUT', sealPath('conv', 'h', b.envelope.seq), seal)).json.status).toBe('exists');
    }
    const meta = sealedMeta('k1');
    const m = await client.call('PUT', '/v1/sessions/conv/meta/seal', meta);
    expect(m.status, m.text).toBe(200);
    expect(m.json).toMatchObject({ sealed: meta.sealed, projectKey: meta.projectKey, created: metaFor('conv').header.timestamp });
    expect(m.json.header).toBeUndefined();
    expect((await client.call('PUT', '/v1/sessions/conv/meta/seal', meta)).status).toBe(200);
    expect((await client.call('GET', '/v1/changes')).json).toEqual(headsBefore);
    const pulled = await client.pullAll('conv');
    expect(pulled.batches.map((b) => [b.envelope.seq, b.envelope.encoding, b.envelope.batchId])).toEqual([[1, 'aes-256-gcm', 'b-h-1'], [2, 'aes-256-gcm', 'b-h-2']]);
    expect(pulled.cursor).toEqual({ h: 2 });
    for (const k of [keys.batch(account, 'conv', 'h', 1), keys.batch(account, 'conv', 'h', 2), keys.sessionMeta(account, 'conv')]) {
      expect(new TextDecoder().decode((await rig.fs.get(k))!.body)).not.toMatch(/entry 0 of batch|home\/a\/src|github\.com|a test session/);
    }
  });

  it('the quota counter follows a seal: usage after it equals a fresh count of what is stored', async () => {
    const { client, account } = await newAccount();
    const b = await makeBatch({ session: 'q', host: 'h', seq: 1, count: 20, meta: metaFor('q') });
    await client.push(b);
    expect((await admin().call('PUT', `/v1/admin/accounts/${account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    await putAccountKey(client, 'k1');
    const seal = await sealOf(b, randomBase64(Math.ceil(b.body.length * 1.1) + 28));
    expect((await client.call('PUT', sealPath('q', 'h', 1), seal)).status).toBe(200);
    const counted = (await admin().call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes;
    expect(counted).toBe(seal.body.length);
    expect(counted).not.toBe(b.body.length);
  });
});
