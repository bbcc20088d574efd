// The account key, sealed meta and re-wrap routes inside workerd: the real Workers entry on R2.
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { AccountKeyResponseSchema, SessionMetaResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, type Fetcher } from '../worker/routes-helpers.js';
import { makeSealedBatch, putAccountKey, randomBase64, sealedMeta } from '../worker/sealed-helpers.js';

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };

async function newClient(): Promise<TestClient> {
  return new TestClient(worker, (await adminCreateAccount(worker, TEST_ADMIN_SECRET)).token);
}

describe('end-to-end encrypted accounts in workerd on R2', () => {
  it('creates the account key once, rotates it, and re-wraps a session key (idempotent on a re-run)', async () => {
    const client = await newClient();
    expect((await client.call('GET', '/v1/account/key')).json).toEqual({ encrypted: false });
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    const meta = sealedMeta('k1');
    expect((await client.push(await makeSealedBatch({ session: 'w', host: 'h', seq: 1, meta }))).status).toBe(201);
    const rotated = AccountKeyResponseSchema.parse((await putAccountKey(client, 'k2', 'k1')).json);
    expect(rotated).toMatchObject({ encrypted: true, keyId: 'k2', retired: [{ keyId: 'k1' }] });
    const wrappedKey = randomBase64(40);
    for (let i = 0; i < 2; i++) {
      const r = await client.call('PUT', '/v1/sessions/w/key', { keyId: 'k2', wrappedKey, replaces: 'k1' });
      expect(r.status, r.text).toBe(200);
      expect(SessionMetaResponseSchema.parse(r.json).sealed).toEqual({ ...meta.sealed, keyId: 'k2', wrappedKey });
    }
    const got = SessionMetaResponseSchema.parse((await client.call('GET', '/v1/sessions/w')).json);
    expect(got.header).toBeUndefined();
    expect(got.hosts).toEqual({ h: 1 });
  });

  it('entries under another data key than the stored meta are refused (metaMismatch), an empty announcement is flagged; a jsonl push is encryption_required', async () => {
    const client = await newClient();
    await putAccountKey(client, 'k1');
    await client.push(await makeSealedBatch({ session: 'twin', host: 'a', seq: 1, meta: sealedMeta('k1') }));
    const refused = await client.push(await makeSealedBatch({ session: 'twin', host: 'b', seq: 1, meta: sealedMeta('k1') }));
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'conflict', details: { metaMismatch: true } });
    expect((await client.call('GET', '/v1/sessions/twin')).json.hosts).toEqual({ a: 1 });
    const second = await client.push(await makeSealedBatch({ session: 'twin', host: 'b', seq: 1, count: 0, meta: sealedMeta('k1') }));
    expect(second.status).toBe(201);
    expect(second.json.metaMismatch).toBe(true);
    const plain = await client.push(await makeBatch({ session: 'twin', host: 'a', seq: 2 }));
    expect(plain.status).toBe(400);
    expect(plain.json.error.code).toBe('encryption_required');
  });

  it('a damaged account key record answers 422 corrupt (never 500) to GET, PUT and push, and nothing is written', async () => {
    const a = await adminCreateAccount(worker, TEST_ADMIN_SECRET);
    const client = new TestClient(worker, a.token);
    const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;
    await bucket.put(keys.accountKey(a.account), '{"keyId":');
    const listing = async () => (await bucket.list({ prefix: `a/${a.account}/` })).objects.map((o) => `${o.key} ${o.etag}`);
    const before = await listing();
    for (const r of [await client.call('GET', '/v1/account/key'), await putAccountKey(client, 'k1'), await client.push(await makeSealedBatch({ session: 'd', host: 'h', seq: 1, meta: sealedMeta('k1') }))]) {
      expect(r.status, r.text).toBe(422);
      expect(r.json.error).toMatchObject({ code: 'corrupt', retryable: false });
    }
    expect(await listing()).toEqual(before);
  });
});
