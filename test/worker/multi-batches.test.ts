// POST /v1/batches on Node: the real app over the file-system store (and memory), per-item results, group commit with failure injection.
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { ChangesResponseSchema, PushBatchesResponseSchema, type PushBatchRequest } from '../../shared/wire.js';
import { FailingStore } from '../ops/failing-store.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor, storeSnapshot } from './routes-helpers.js';
import { tempDir } from '../helpers/cli.js';
import { sha256Hex } from '../../worker/sha256.js';

const cleanups: (() => void)[] = [];
afterAll(async () => {
  for (const c of cleanups) c();
});

async function fsStore(): Promise<FsStore> {
  const dir = tempDir('sessync-multi-');
  cleanups.push(dir.cleanup);
  const s = new FsStore(dir.dir);
  await s.open();
  return s;
}

async function rig(inner: BlobStore, env: Record<string, unknown> = {}) {
  const store = new FailingStore(inner);
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }), env);
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  return { store, client: new TestClient(f, a.token) };
}

function pushMany(client: TestClient, batches: unknown[]) {
  return client.call('POST', '/v1/batches', { batches });
}

/** Entry ids each session holds on the server, by pulling it like a client. */
async function entryIds(client: TestClient, session: string): Promise<string[]> {
  const { batches } = await client.pullAll(session);
  return batches.flatMap((b: { body: string }) => b.body.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { id: string }).id));
}

async function heads(client: TestClient): Promise<Record<string, number>> {
  const r = ChangesResponseSchema.parse((await client.call('GET', '/v1/changes')).json);
  return Object.fromEntries(r.heads.map((h) => [`${h.session}/${h.host}`, h.seq]));
}

describe.each([
  ['file system', fsStore],
  ['memory', async () => new MemoryStore()],
])('POST /v1/batches [%s]', (_name, open) => {
  it('stores the batches of several sessions, with their metas and heads; the same request again is all `exists`', async () => {
    const { client } = await rig(await open());
    const batches = await Promise.all(['s1', 's2', 's3'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, count: 4, meta: metaFor(s) })));
    const first = await pushMany(client, batches);
    expect(first.status).toBe(200);
    expect(PushBatchesResponseSchema.parse(first.json).results).toEqual(['s1', 's2', 's3'].map((s) => ({ ok: true, status: 'created', session: s, host: 'h1', seq: 1 })));
    const again = await pushMany(client, batches);
    expect(again.json.results.map((r: { status: string }) => r.status)).toEqual(['exists', 'exists', 'exists']);
    expect(await heads(client)).toEqual({ 's1/h1': 1, 's2/h1': 1, 's3/h1': 1 });
    for (const s of ['s1', 's2', 's3']) {
      expect(await entryIds(client, s)).toEqual([0, 1, 2, 3].map((i) => `e-h1-1-${i}`));
      expect((await client.call('GET', `/v1/sessions/${s}`)).json.projectKey).toBe('github.com/a/app');
    }
  });

  it('one refused item does not fail the others, and leaves nothing of itself behind', async () => {
    const { store, client } = await rig(await open());
    const good = await makeBatch({ session: 'ok', host: 'h1', seq: 1, meta: metaFor('ok') });
    const badSha: PushBatchRequest = { ...(await makeBatch({ session: 'sha', host: 'h1', seq: 1, meta: metaFor('sha') })), body: '{"x":1}\n' };
    const gap = await makeBatch({ session: 'gap', host: 'h1', seq: 2 });
    const badLine = await makeBatch({ session: 'line', host: 'h1', seq: 1, lines: ['{"type":"message"}'], meta: metaFor('line') });
    const malformed = { envelope: { session: 'bad' }, body: 1 };
    const before = await storeSnapshot(store);
    const r = await pushMany(client, [badSha, good, gap, malformed, badLine]);
    expect(r.status).toBe(200);
    const results = PushBatchesResponseSchema.parse(r.json).results;
    expect(results.map((x) => (x.ok ? x.status : x.error.code))).toEqual(['bad_input', 'created', 'conflict', 'bad_input', 'bad_input']);
    expect(results[0]).toMatchObject({ ok: false, error: { message: expect.stringContaining('sha256'), retryable: false } });
    expect(results[3]).toMatchObject({ ok: false, error: { message: expect.stringContaining('batches.3') } });
    const after = await storeSnapshot(store);
    const added = [...after.keys()].filter((k) => !before.has(k));
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((k) => k.includes('/ok/'))).toBe(true);
  });

  it('refuses two batches of one session in one request (the second), and a request over the cap as a whole', async () => {
    const { store, client } = await rig(await open(), { SESSYNC_MAX_BATCHES_PER_PUSH: '2' });
    const one = await makeBatch({ session: 'twice', host: 'h1', seq: 1, meta: metaFor('twice') });
    const two = await makeBatch({ session: 'twice', host: 'h1', seq: 2 });
    const r = await pushMany(client, [one, two]);
    expect(r.json.results[0]).toMatchObject({ ok: true, status: 'created' });
    expect(r.json.results[1]).toMatchObject({ ok: false, error: { code: 'bad_input', message: expect.stringContaining('next request') } });
    const before = await storeSnapshot(store);
    const over = await pushMany(client, await Promise.all(['a', 'b', 'c'].map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) }))));
    expect(over.status).toBe(413);
    expect(over.json.error).toMatchObject({ code: 'too_large', details: { maxBatches: 2 } });
    expect(await storeSnapshot(store)).toEqual(before);
  });
});

describe('POST /v1/batches on an end-to-end encrypted account', () => {
  it('holds every item to the account\'s rules: plaintext batches and meta refused, a ciphertext batch stored', async () => {
    const { client } = await rig(new MemoryStore());
    expect((await client.call('PUT', '/v1/account/key', { keyId: 'k1', check: 'Y2hlY2s' })).status).toBe(200);
    const plain = await makeBatch({ session: 'e1', host: 'h1', seq: 1, meta: metaFor('e1') });
    const body = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=' /* 32 bytes: more than nonce + tag */;
    const sealed: PushBatchRequest = {
      envelope: { session: 'e2', host: 'h1', seq: 1, batchId: 'b-e2', entryCount: 1, sha256: await sha256Hex(body), encoding: 'aes-256-gcm' },
      body,
      meta: { projectKey: 'a'.repeat(64), sealed: { keyId: 'k1', wrappedKey: 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJw==', ciphertext: body } },
    };
    const results = PushBatchesResponseSchema.parse((await pushMany(client, [plain, sealed])).json).results;
    expect(results[0]).toMatchObject({ ok: false, error: { code: 'encryption_required', retryable: false } });
    expect(results[1]).toMatchObject({ ok: true, status: 'created', session: 'e2' });
    expect(await heads(client)).toEqual({ 'e2/h1': 1 });
  });
});

describe('group commit of POST /v1/batches (file system, failure injection)', () => {
  const SESSIONS = ['g1', 'g2', 'g3', 'g4'];

  /** Seq 1 of g1 and g2 stored first, so the request mixes new sessions (with meta) and later seqs. */
  async function request(): Promise<PushBatchRequest[]> {
    return Promise.all(SESSIONS.map((s, i) => (i < 2 ? makeBatch({ session: s, host: 'h1', seq: 2, count: 2 }) : makeBatch({ session: s, host: 'h1', seq: 1, count: 2, meta: metaFor(s) }))));
  }

  async function seeded() {
    const r = await rig(await fsStore());
    for (const s of SESSIONS.slice(0, 2)) expect((await r.client.push(await makeBatch({ session: s, host: 'h1', seq: 1, count: 2, meta: metaFor(s) }))).status).toBe(201);
    return r;
  }

  it('one fsync round per step for all the batches of a request, not per batch', async () => {
    const { store, client } = await seeded();
    store.groups = store.groupedWrites = 0; // the seeding pushes group their batch and meta too
    const r = await pushMany(client, await request());
    expect(r.json.results.every((x: { ok: boolean }) => x.ok)).toBe(true);
    // Batches with the metas of the two new sessions (one folder each), then heads: two groups for four sessions' ten writes.
    expect(store.groups).toBe(2);
    expect(store.groupedWrites).toBe(4 + 2 + 4);
  });

  it('the single route too: a new session\'s batch and meta in one round (one writeMany), its head after', async () => {
    const { store, client } = await rig(await fsStore());
    expect((await client.push(await makeBatch({ session: 'one', host: 'h1', seq: 1, count: 2, meta: metaFor('one') }))).status).toBe(201);
    expect([store.groups, store.groupedWrites]).toEqual([1, 2]);
    expect(await heads(client)).toEqual({ 'one/h1': 1 });
    expect((await client.call('GET', '/v1/sessions/one')).status).toBe(200);
  });

  it('a crash at any write of the group, then the same request again: nothing lost, nothing doubled, no gap', async () => {
    const { store: probe, client: probeClient } = await seeded();
    probe.arm(1_000_000);
    await pushMany(probeClient, await request());
    const writes = probe.writes;
    expect(writes).toBeGreaterThanOrEqual(10);
    for (let n = 0; n < writes; n++) {
      const { store, client } = await seeded();
      const req = await request();
      store.arm(n);
      const crashed = await pushMany(client, req);
      expect(store.fired).toBe(true);
      // Every item of the failed group is reported retryable; none is reported stored when it is not.
      store.disarm();
      for (const [i, x] of (crashed.json.results as { ok: boolean; error?: { retryable: boolean } }[]).entries()) {
        if (!x.ok) expect(x.error!.retryable).toBe(true);
        else expect(await entryIds(client, SESSIONS[i]!), `crash at write ${n}: ${SESSIONS[i]} reported stored`).toContain(`e-h1-${i < 2 ? 2 : 1}-1`);
      }
      const retried = PushBatchesResponseSchema.parse((await pushMany(client, req)).json).results;
      expect(retried.every((x) => x.ok)).toBe(true);
      expect(await heads(client)).toEqual({ 'g1/h1': 2, 'g2/h1': 2, 'g3/h1': 1, 'g4/h1': 1 });
      for (const [i, s] of SESSIONS.entries()) {
        const want = i < 2 ? ['e-h1-1-0', 'e-h1-1-1', 'e-h1-2-0', 'e-h1-2-1'] : ['e-h1-1-0', 'e-h1-1-1'];
        expect(await entryIds(client, s), `crash at write ${n}, session ${s}`).toEqual(want);
        expect((await client.call('GET', `/v1/sessions/${s}`)).status).toBe(200);
      }
    }
  }, 60_000);
});
