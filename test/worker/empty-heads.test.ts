// Heads are written empty (their key says session, host and seq); heads an older server wrote with {seq, batchId} are read the same.
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { keys } from '../../shared/keys.js';
import { tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor, storedKeys } from './routes-helpers.js';

const t = tempDir('sessync-empty-heads-');
afterAll(() => t.cleanup());
let n = 0;

async function rig() {
  const store = new FsStore(`${t.dir}/s${n++}`);
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  return { store, account: a.account, client: new TestClient(f, a.token) };
}

describe('heads on the file store', () => {
  it('a push writes its head as an empty file, and the session reads, pulls and advances from it', async () => {
    const { store, account, client } = await rig();
    expect((await client.push(await makeBatch({ session: 's1', host: 'h1', seq: 1, count: 2, meta: metaFor('s1') }))).json.status).toBe('created');
    const head = keys.head(account, 's1', 'h1', 1);
    expect(await storedKeys(store, keys.headsPrefix(account))).toEqual([head]);
    expect((await store.get(head))!.body.byteLength).toBe(0);
    expect((await client.call('GET', '/v1/sessions/s1')).json.hosts).toEqual({ h1: 1 });
    expect((await client.push(await makeBatch({ session: 's1', host: 'h1', seq: 2, count: 1 }))).json.status).toBe('created');
    expect(await storedKeys(store, keys.headsPrefix(account))).toEqual([keys.head(account, 's1', 'h1', 2)]);
    expect((await client.pullAll('s1')).batches.map((b: { envelope: { seq: number } }) => b.envelope.seq)).toEqual([1, 2]);
    // The retry of a stored batch finds its head: nothing written, nothing doubled.
    expect((await client.push(await makeBatch({ session: 's1', host: 'h1', seq: 2, count: 1 }))).json.status).toBe('exists');
    expect(await storedKeys(store, keys.headsPrefix(account))).toEqual([keys.head(account, 's1', 'h1', 2)]);
  });

  it("an older server's head ({seq, batchId}) is read as before, and the next push replaces it with an empty one", async () => {
    const { store, account, client } = await rig();
    expect((await client.push(await makeBatch({ session: 's2', host: 'h1', seq: 1, count: 2, meta: metaFor('s2') }))).json.status).toBe('created');
    // As an older server left it: the same key, holding its facts as JSON.
    const old = keys.head(account, 's2', 'h1', 1);
    await store.delete(old);
    expect(await store.putIfAbsent(old, new TextEncoder().encode(JSON.stringify({ seq: 1, batchId: 'b-h1-1' })))).toBe(true);
    expect((await client.call('GET', '/v1/sessions/s2')).json.hosts).toEqual({ h1: 1 });
    expect((await client.call('GET', '/v1/changes')).json.heads).toEqual([{ session: 's2', host: 'h1', seq: 1 }]);
    expect((await client.push(await makeBatch({ session: 's2', host: 'h1', seq: 2, count: 1 }))).json.status).toBe('created');
    const now = keys.head(account, 's2', 'h1', 2);
    expect(await storedKeys(store, keys.headsPrefix(account))).toEqual([now]);
    expect((await store.get(now))!.body.byteLength).toBe(0);
    expect((await client.pullAll('s2')).batches).toHaveLength(2);
  });
});
