// Route tests on Node: the real Hono app over MemoryStore, called through app.fetch like a client.
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { PullResponseSchema, ChangesResponseSchema, SessionMetaResponseSchema, ErrorBodySchema, HealthResponseSchema } from '../../shared/wire.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';
import { describeRouteRaces } from './routes-races.case.js';
import { tempDir } from '../helpers/cli.js';

const ADMIN = TEST_ADMIN_SECRET;
const ENV_SECRET = 'Xr4nW8qLz2Tb6VyK0pHs5JdM9cFg3AeU';

let store: MemoryStore;
let anon: TestClient;
let alice: TestClient;
let aliceAccount: string;

async function allKeys(): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const p = await store.list(cursor ? { cursor } : {});
    out.push(...p.keys);
    cursor = p.cursor;
  } while (cursor);
  return out;
}

beforeEach(async () => {
  store = new MemoryStore();
  const f = appFetcher(createApp({ store, adminSecret: ADMIN }));
  anon = new TestClient(f);
  const a = await adminCreateAccount(f, ADMIN);
  aliceAccount = a.account;
  alice = new TestClient(f, a.token);
});

describe('health, whoami and tokens', () => {
  it('health answers without a token and identifies the service', async () => {
    const r = await anon.call('GET', '/v1/health');
    expect(r.status).toBe(200);
    expect(HealthResponseSchema.parse(r.json)).toEqual({ service: 'sessync', api: 1 });
  });

  it('whoami names the account of the token; tokens are stored only hashed', async () => {
    const r = await alice.call('GET', '/v1/whoami');
    expect(r).toMatchObject({ status: 200, json: { account: aliceAccount } });
    const stored = await allKeys();
    expect(stored.some((k) => k.includes(alice.token!))).toBe(false);
    for (const k of stored) expect(new TextDecoder().decode((await store.get(k))!.body)).not.toContain(alice.token!);
  });

  it('an admin-made second token works for the same account', async () => {
    const r = await new TestClient(appFetcher(createApp({ store, adminSecret: ADMIN })), ADMIN).call('POST', `/v1/admin/accounts/${aliceAccount}/tokens`);
    expect(r.status).toBe(201);
    const second = new TestClient(appFetcher(createApp({ store, adminSecret: ADMIN })), r.json.token);
    expect((await second.call('GET', '/v1/whoami')).json).toEqual({ account: aliceAccount });
  });

  it('the admin secret comes from the SESSYNC_ADMIN_SECRET binding when not given', async () => {
    const f = appFetcher(createApp({ store }), { SESSYNC_ADMIN_SECRET: ENV_SECRET });
    expect((await new TestClient(f, ENV_SECRET).call('POST', '/v1/admin/accounts')).status).toBe(201);
    expect((await new TestClient(f, ADMIN).call('POST', '/v1/admin/accounts')).status).toBe(401);
    const off = appFetcher(createApp({ store }));
    const r = await new TestClient(off, 'anything').call('POST', '/v1/admin/accounts');
    expect(r.status).toBe(403);
    expect(r.json.error.message).toMatch(/SESSYNC_ADMIN_SECRET/);
  });
});

describe('push and pull', () => {
  it('round-trips batches and records metadata as first pushed', async () => {
    const b1 = await makeBatch({ session: 's1', host: 'laptop', seq: 1, meta: metaFor('s1') });
    expect(await alice.push(b1)).toMatchObject({ status: 201, json: { status: 'created', seq: 1 } });
    const b2 = await makeBatch({ session: 's1', host: 'laptop', seq: 2, meta: { ...metaFor('s1', '/elsewhere'), name: 'renamed' } });
    expect((await alice.push(b2)).status).toBe(201);

    const p = await alice.pull('s1');
    expect(p.status).toBe(200);
    const body = PullResponseSchema.parse(p.json);
    expect(body.batches.map((b) => b.envelope.seq)).toEqual([1, 2]);
    expect(body.batches[0]!.body).toBe(b1.body);
    expect(body.cursor).toEqual({ laptop: 2 });
    expect(body.more).toBe(false);
    expect((await alice.pull('s1', { laptop: 2 })).json).toEqual({ batches: [], cursor: { laptop: 2 }, more: false });

    const m = await alice.call('GET', '/v1/sessions/s1');
    const meta = SessionMetaResponseSchema.parse(m.json);
    expect(meta).toMatchObject({ session: 's1', cwd: '/home/a/src/app', name: 'a test session', projectKey: 'github.com/a/app', hosts: { laptop: 2 } });
    expect(meta.created).toBe('2026-01-01T00:00:00.000Z'); // the header's timestamp, not the push time
  });

  it('a different batch at a taken seq is refused with 409 and the stored one is kept', async () => {
    const b = await makeBatch({ session: 's1', host: 'h1', seq: 1 });
    await alice.push(b);
    const other = await makeBatch({ session: 's1', host: 'h1', seq: 1, count: 2, batchId: 'other' });
    const r = await alice.push(other);
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'conflict' });
    expect(r.json.error.message).toMatch(/different batch at seq 1/);
    expect((await alice.pullAll('s1')).batches[0].body).toBe(b.body);
  });

  it('a retry repairs a head lost between the batch write and the head write', async () => {
    const b = await makeBatch({ session: 's1', host: 'h1', seq: 1 });
    // What a crash after the batch write leaves behind: the batch, no head.
    await store.put(keys.batch(aliceAccount, 's1', 'h1', 1), new TextEncoder().encode(JSON.stringify({ envelope: b.envelope, body: b.body })));
    expect((await alice.pull('s1')).status).toBe(404);
    expect((await alice.push(b)).json.status).toBe('exists');
    expect((await alice.pullAll('s1')).batches).toHaveLength(1);
  });

  it('keeps one head key per host', async () => {
    for (let seq = 1; seq <= 5; seq++) await alice.push(await makeBatch({ session: 's1', host: 'h1', seq }));
    await alice.push(await makeBatch({ session: 's1', host: 'h1', seq: 2 })); // an old retry does not bring back an old head
    const heads = (await allKeys()).filter((k) => k.startsWith(keys.headsPrefix(aliceAccount)));
    expect(heads).toEqual([keys.head(aliceAccount, 's1', 'h1', 5)]);
  });

  it('pull pages by batch count and resumes from the returned cursor', async () => {
    for (let seq = 1; seq <= 95; seq++) await alice.push(await makeBatch({ session: 'big', host: 'h', seq, count: 1 }));
    const first = await alice.pull('big');
    expect(first.json.batches).toHaveLength(40);
    expect(first.json).toMatchObject({ cursor: { h: 40 }, more: true });
    const rest = await alice.pullAll('big', first.json.cursor);
    expect(rest.batches.map((b) => b.envelope.seq)).toEqual(Array.from({ length: 55 }, (_, i) => i + 41));
    expect(rest.requests).toBe(2);
  });

  it('pull pages by bytes: a page stops once it reaches the byte limit', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    for (let seq = 1; seq <= 4; seq++) {
      await alice.push(await makeBatch({ session: 'fat', host: 'h', seq, lines: [{ type: 'custom', customType: 'test', id: `f${seq}`, parentId: null, timestamp: 't', data: big }] }));
    }
    const first = await alice.pull('fat');
    expect(first.json.batches).toHaveLength(3); // 3 x 3 MB crosses 8 MB on the third
    expect(first.json.more).toBe(true);
    expect((await alice.pullAll('fat', first.json.cursor)).batches).toHaveLength(1);
  });
});

describe('changes', () => {
  it('one request answers for 1,000 sessions', async () => {
    for (let i = 0; i < 1000; i++) {
      await store.put(keys.head(aliceAccount, `s${i}`, 'h', i + 1), new Uint8Array());
    }
    const r = await alice.call('GET', '/v1/changes');
    const body = ChangesResponseSchema.parse(r.json);
    expect(body.heads).toHaveLength(1000);
    expect(body.nextPage).toBeUndefined();
    expect(body.heads.find((h) => h.session === 's7')).toEqual({ session: 's7', host: 'h', seq: 8 });
  });

  it('pages past 5,000 heads with nextPage and collapses to the highest seq', async () => {
    for (let i = 0; i < 6200; i++) await store.put(keys.head(aliceAccount, `s${String(i).padStart(5, '0')}`, 'h', 1), new Uint8Array());
    await store.put(keys.head(aliceAccount, 's00003', 'h', 7), new Uint8Array()); // a stale head left beside a newer one
    const p1 = ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json);
    expect(p1.nextPage).toBeDefined();
    const p2 = ChangesResponseSchema.parse((await alice.call('GET', `/v1/changes?page=${encodeURIComponent(p1.nextPage!)}`)).json);
    expect(p2.nextPage).toBeUndefined();
    const all = [...p1.heads, ...p2.heads];
    expect(new Set(all.map((h) => h.session)).size).toBe(6200);
    expect(all.find((h) => h.session === 's00003')!.seq).toBe(7);
  });

  it('an account sees only its own sessions', async () => {
    await alice.push(await makeBatch({ session: 'mine', host: 'h', seq: 1 }));
    const f = appFetcher(createApp({ store, adminSecret: ADMIN }));
    const bob = new TestClient(f, (await adminCreateAccount(f, ADMIN)).token);
    expect((await bob.call('GET', '/v1/changes')).json).toEqual({ heads: [] });
    const missing = await bob.call('GET', '/v1/sessions/never-pushed');
    const foreign = await bob.call('GET', '/v1/sessions/mine');
    expect(foreign.status).toBe(404);
    expect(ErrorBodySchema.parse(foreign.json).error.code).toBe('not_found');
    expect(foreign.text.replace('mine', 'X')).toBe(missing.text.replace('never-pushed', 'X'));
    expect((await bob.pull('mine')).status).toBe(404);
    // Bob's own session of the same name is a different session.
    expect((await bob.push(await makeBatch({ session: 'mine', host: 'h', seq: 1, count: 1 }))).json.status).toBe('created');
    expect((await alice.pullAll('mine')).batches[0].envelope.entryCount).toBe(3);
  });
});

describeRouteRaces('MemoryStore', async () => ({ store: new MemoryStore() }));
describeRouteRaces('FsStore', async () => {
  const t = tempDir();
  return { store: new FsStore(t.dir), cleanup: t.cleanup };
});
