// Tokens inside workerd through the Workers entry on R2: list, revoke (401 at once), last used written after the answer.
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, type Fetcher } from '../worker/routes-helpers.js';

const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;
const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };

describe('tokens in workerd on R2', () => {
  it('issues, lists with the last used day, revokes: every later request with it is 401', async () => {
    const a = await adminCreateAccount(worker, TEST_ADMIN_SECRET);
    const alice = new TestClient(worker, a.token);
    const laptop = (await alice.call('POST', '/v1/tokens', { name: 'laptop' })).json;
    const asLaptop = new TestClient(worker, laptop.token);
    expect((await asLaptop.call('GET', '/v1/changes')).status).toBe(200);
    const rec = JSON.parse(await (await bucket.get(keys.token(await sha256Hex(laptop.token))))!.text());
    expect(rec).toMatchObject({ account: a.account, id: laptop.id, name: 'laptop', lastUsed: new Date().toISOString().slice(0, 10) });
    const list = (await alice.call('GET', '/v1/tokens')).json.tokens;
    expect(list.map((t: { name?: string; current: boolean }) => [t.name, t.current])).toEqual([[undefined, true], ['laptop', false]]);
    expect((await alice.call('DELETE', `/v1/tokens/${laptop.id}`)).status).toBe(200);
    for (const [method, path] of [['GET', '/v1/changes'], ['GET', '/v1/whoami'], ['GET', '/v1/tokens'], ['GET', '/v1/shares']] as const) {
      expect((await asLaptop.call(method, path)).status).toBe(401);
    }
    expect((await admin().call('DELETE', `/v1/admin/accounts/${a.account}/tokens/${list[0].id}`)).status).toBe(200);
    expect((await alice.call('GET', '/v1/whoami')).status).toBe(401);
  });
});

function admin(): TestClient {
  return new TestClient(worker, TEST_ADMIN_SECRET);
}
