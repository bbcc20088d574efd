// GET/PUT /v1/account/key through the real Node server: created once, rotated once per key, a damaged record a 422.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { AccountKeyResponseSchema } from '../../shared/wire.js';
import { startNodeRig, http, type NodeRig } from './node-rig.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor, storeSnapshot } from './routes-helpers.js';
import { checkFor, makeSealedBatch, putAccountKey, sealedMeta } from './sealed-helpers.js';
import { captureErrors } from '../ops/damaged-helpers.js';

let rig: NodeRig;
const logged = captureErrors();

beforeAll(async () => {
  rig = await startNodeRig();
});
afterAll(() => rig?.close());

/** A fresh account on the rig's server. */
async function newAccount(): Promise<{ client: TestClient; account: string }> {
  const r = await new TestClient(http, TEST_ADMIN_SECRET, rig.url).call('POST', '/v1/admin/accounts', { name: 'key test' });
  expect(r.status, r.text).toBe(201);
  return { client: new TestClient(http, r.json.token, rig.url), account: r.json.account };
}

describe('the account key record', () => {
  it('a plaintext account answers encrypted: false; the first PUT makes it encrypted, and GET answers the record', async () => {
    const { client } = await newAccount();
    expect((await client.call('GET', '/v1/account/key')).json).toEqual({ encrypted: false });
    const put = await putAccountKey(client, 'k1');
    expect(put.status, put.text).toBe(200);
    const rec = AccountKeyResponseSchema.parse(put.json);
    expect(rec).toMatchObject({ encrypted: true, keyId: 'k1', check: checkFor('k1'), retired: [] });
    expect(AccountKeyResponseSchema.parse((await client.call('GET', '/v1/account/key')).json)).toEqual(rec);
  });

  it('the same PUT again answers the record unchanged (a retry of a lost answer) and writes nothing', async () => {
    const { client } = await newAccount();
    const first = await putAccountKey(client, 'k1');
    const before = await storeSnapshot(rig.fs);
    const again = await putAccountKey(client, 'k1');
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(await storeSnapshot(rig.fs)).toEqual(before);
  });

  it('two machines creating the key at once: exactly one wins, the other gets 409 key_mismatch', async () => {
    const { client } = await newAccount();
    const answers = await Promise.all(['ka', 'kb', 'kc', 'kd'].map((k) => putAccountKey(client, k)));
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(409);
      expect(a.json.error).toMatchObject({ code: 'key_mismatch', retryable: false });
      expect(a.json.error.message).toMatch(/sessync key status/);
    }
    expect((await client.call('GET', '/v1/account/key')).json.keyId).toBe(won[0]!.json.keyId);
  });

  it('rotation: replaces = the current key; the old id is retired; a retry answers 200; a rotation from the retired key is 409', async () => {
    const { client } = await newAccount();
    await putAccountKey(client, 'k1');
    const rotated = await putAccountKey(client, 'k2', 'k1');
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json).toMatchObject({ encrypted: true, keyId: 'k2', retired: [{ keyId: 'k1' }] });
    expect((await putAccountKey(client, 'k2', 'k1')).json).toEqual(rotated.json);
    const stale = await putAccountKey(client, 'k3', 'k1');
    expect(stale.status).toBe(409);
    expect(stale.json.error.message).toMatch(/key k1 is not the account's current key \(k2\)/);
    const reuse = await putAccountKey(client, 'k1', 'k2');
    expect(reuse.status).toBe(409);
    expect(reuse.json.error.message).toMatch(/already used by a retired key/);
    expect((await client.call('GET', '/v1/account/key')).json.keyId).toBe('k2');
  });

  it('two machines rotating away from one key at once: exactly one rotation lands', async () => {
    const { client } = await newAccount();
    await putAccountKey(client, 'k1');
    const answers = await Promise.all(['r1', 'r2', 'r3'].map((k) => putAccountKey(client, k, 'k1')));
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.json.error.code === 'key_mismatch')).toHaveLength(2);
    const now = (await client.call('GET', '/v1/account/key')).json;
    expect(now).toMatchObject({ keyId: won[0]!.json.keyId, retired: [{ keyId: 'k1' }] });
  });

  it('a rotation interrupted after its marker (the record not yet written) completes on a re-run', async () => {
    const { client, account } = await newAccount();
    await putAccountKey(client, 'k1');
    // What a crash between the two writes leaves: the winner's marker, the record still at k1.
    await rig.fs.putIfAbsent(keys.keyRotation(account, 'k1'), new TextEncoder().encode(JSON.stringify({ keyId: 'k2', check: checkFor('k2') })));
    expect((await putAccountKey(client, 'k9', 'k1')).status).toBe(409);
    const rerun = await putAccountKey(client, 'k2', 'k1');
    expect(rerun.status, rerun.text).toBe(200);
    expect(rerun.json).toMatchObject({ keyId: 'k2', retired: [{ keyId: 'k1' }] });
  });
});

describe('a damaged account key record: a clear 422, never a 500, and nothing stored', () => {
  it.each([
    ['not JSON', '{"keyId":'],
    ['not a key record', '{"keyId":7}'],
  ])('%s: GET, PUT and push answer 422 corrupt naming the admin, and store nothing', async (_name, text) => {
    const { client, account } = await newAccount();
    await rig.fs.put(keys.accountKey(account), new TextEncoder().encode(text));
    const before = await storeSnapshot(rig.fs);
    const answers = [
      await client.call('GET', '/v1/account/key'),
      await putAccountKey(client, 'k1'),
      await client.push(await makeBatch({ session: 'd1', host: 'h', seq: 1, meta: metaFor('d1') })),
      await client.push(await makeSealedBatch({ session: 'd2', host: 'h', seq: 1, meta: sealedMeta('k1') })),
    ];
    for (const a of answers) {
      expect(a.status, a.text).toBe(422);
      expect(a.json.error).toMatchObject({ code: 'corrupt', retryable: false });
      expect(a.json.error.message).toMatch(/the key record of this account stored on this server is damaged \((not JSON|not a key record).*cannot tell whether the account is end-to-end encrypted.*server.s admin/);
    }
    expect(await storeSnapshot(rig.fs)).toEqual(before);
    // The admin who is asked finds the record's key in the log.
    expect(logged.some((l) => l.includes(keys.accountKey(account)) && /damaged/.test(l))).toBe(true);
  });

  it('a damaged rotation marker: the rotation it guards answers 422 corrupt (logged with its key), and the key stays', async () => {
    const { client, account } = await newAccount();
    expect((await putAccountKey(client, 'k1')).status).toBe(200);
    const marker = keys.keyRotation(account, 'k1');
    await rig.fs.put(marker, new TextEncoder().encode('{"keyId":"k2","che'));
    const r = await putAccountKey(client, 'k2', 'k1');
    expect(r.status, r.text).toBe(422);
    expect(r.json.error).toMatchObject({ code: 'corrupt', retryable: false });
    expect(r.json.error.message).toMatch(/the key rotation record of this account stored on this server is damaged \(not JSON.*cannot tell which key the account key was rotated to/);
    expect(logged.some((l) => l.includes(marker))).toBe(true);
    expect((await client.call('GET', '/v1/account/key')).json).toMatchObject({ keyId: 'k1' });
  });
});
