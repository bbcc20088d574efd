// POST /v1/pulls on Node: each session's page as the single pull route answers it, one byte budget, per-item 404s.
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { keys } from '../../shared/keys.js';
import { LIMITS, PullManyResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

let alice: TestClient;
let store: MemoryStore;
let account: string;

beforeEach(async () => {
  store = new MemoryStore();
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const made = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  account = made.account;
  alice = new TestClient(f, made.token);
});

async function seed(session: string, batches: number, count = 3): Promise<void> {
  for (let seq = 1; seq <= batches; seq++) expect((await alice.push(await makeBatch({ session, host: 'h1', seq, count, meta: metaFor(session) }))).status).toBe(201);
}

describe('POST /v1/pulls', () => {
  it('answers each session exactly as its own pull would, in request order, with a missing session as its item\'s 404', async () => {
    await seed('p1', 2);
    await seed('p2', 1);
    const r = await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'p2', cursor: {} }, { session: 'nope', cursor: {} }, { session: 'p1', cursor: { h1: 1 } }] });
    expect(r.status).toBe(200);
    const results = PullManyResponseSchema.parse(r.json).results;
    expect(results[0]).toEqual({ ok: true, session: 'p2', ...(await alice.pull('p2', {})).json });
    expect(results[1]).toMatchObject({ ok: false, session: 'nope', error: { code: 'not_found', retryable: false } });
    expect(results[2]).toEqual({ ok: true, session: 'p1', ...(await alice.pull('p1', { h1: 1 })).json });
    expect(results[2]!.ok && results[2]!.batches.map((b) => b.envelope.seq)).toEqual([2]);
  });

  it('shares one byte budget: once spent, the sessions after get no batches and `more`, and a re-ask gets them', async () => {
    // Batches of about 1 MB: the 8 MB budget is spent inside the first session's page.
    const big = Array.from({ length: 1000 }, (_, i) => ({ type: 'message', id: `big-${i}`, parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'x'.repeat(1000) } }));
    for (let seq = 1; seq <= 9; seq++) {
      const lines = big.map((e) => ({ ...e, id: `${e.id}-${seq}` }));
      expect((await alice.push(await makeBatch({ session: 'heavy', host: 'h1', seq, lines, meta: metaFor('heavy') }))).status).toBe(201);
    }
    await seed('light', 1);
    const first = PullManyResponseSchema.parse((await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'heavy', cursor: {} }, { session: 'light', cursor: {} }] })).json).results;
    const heavy = first[0]!;
    expect(heavy.ok && heavy.batches.reduce((n, b) => n + b.body.length, 0)).toBeGreaterThanOrEqual(LIMITS.maxPullBytes);
    expect(heavy.ok && heavy.more).toBe(true);
    expect(first[1]).toEqual({ ok: true, session: 'light', batches: [], cursor: {}, more: true });
    const again = PullManyResponseSchema.parse((await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'light', cursor: {} }] })).json).results;
    expect(again[0]!.ok && again[0]!.batches).toHaveLength(1);
  });

  it('refuses a session named twice, and more sessions than the limit, as a whole', async () => {
    expect((await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'a', cursor: {} }, { session: 'a', cursor: {} }] })).json.error).toMatchObject({ code: 'bad_input', message: expect.stringContaining('twice') });
    const many = Array.from({ length: LIMITS.maxSessionsPerPull + 1 }, (_, i) => ({ session: `s${i}`, cursor: {} }));
    expect((await alice.call('POST', '/v1/pulls', { sessions: many })).status).toBe(400);
  });

  it('carries each session\'s meta where `withMeta` asks, exactly as GET /v1/sessions/:session answers it, and only there', async () => {
    await seed('m1', 2);
    await seed('m2', 1);
    const r = await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'm1', cursor: {}, withMeta: true }, { session: 'm2', cursor: {} }] });
    expect(r.status).toBe(200);
    const [m1, m2] = PullManyResponseSchema.parse(r.json).results;
    expect(m1!.ok && m1!.meta).toEqual((await alice.call('GET', '/v1/sessions/m1')).json);
    expect(m1!.ok && m1!.meta?.hosts).toEqual({ h1: 2 });
    expect(m2!.ok && 'meta' in m2!).toBe(false);
    // The single route takes the flag too (a Workers server pulls one session per request).
    const one = await alice.call('POST', '/v1/sessions/m2/pull', { cursor: {}, withMeta: true });
    expect(one.json.meta).toEqual((await alice.call('GET', '/v1/sessions/m2')).json);
    expect(one.json.batches).toHaveLength(1);
  });

  it('leaves the meta out where GET /v1/sessions/:session would answer an error (no meta stored yet), the page as usual', async () => {
    expect((await alice.push(await makeBatch({ session: 'nometa', host: 'h1', seq: 1 }))).status).toBe(201);
    expect((await alice.call('GET', '/v1/sessions/nometa')).status).toBe(404);
    const [item] = PullManyResponseSchema.parse((await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'nometa', cursor: {}, withMeta: true }] })).json).results;
    expect(item).toMatchObject({ ok: true, session: 'nometa', more: false });
    expect(item!.ok && item!.batches).toHaveLength(1);
    expect(item!.ok && 'meta' in item!).toBe(false);
  });

  it('leaves the meta out of a session being deleted (GET answers 410 there), while its remaining batches still page', async () => {
    await seed('dying', 1);
    // The tombstone a deletion writes first, before it removes the session's objects step by step.
    await store.putIfAbsent(`${keys.tombstone(account, 'dying')}/${String(Date.now()).padStart(13, '0')}/h9`, new TextEncoder().encode(JSON.stringify({ session: 'dying', host: 'h9' })));
    expect((await alice.call('GET', '/v1/sessions/dying')).status).toBe(410);
    const [item] = PullManyResponseSchema.parse((await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'dying', cursor: {}, withMeta: true }] })).json).results;
    expect(item!.ok && item!.batches).toHaveLength(1);
    expect(item!.ok && 'meta' in item!).toBe(false);
  });

  it('reads many sessions\' pages at once and still answers each exactly as its own pull, in request order', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `many${i}`);
    for (const [i, id] of ids.entries()) await seed(id, 1 + (i % 3));
    const r = PullManyResponseSchema.parse((await alice.call('POST', '/v1/pulls', { sessions: ids.map((session) => ({ session, cursor: {} })) })).json).results;
    expect(r.map((x) => x.session)).toEqual(ids);
    for (const [i, id] of ids.entries()) expect(r[i]).toEqual({ ok: true, session: id, ...(await alice.pull(id, {})).json });
  });
});

