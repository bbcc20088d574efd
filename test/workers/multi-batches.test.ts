// POST /v1/batches and /v1/pulls inside workerd on R2: the Workers entry caps them (WORKERS_MAX_BATCHES batches, 1 session) and answers each like the single route.
import { exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { PushBatchesResponseSchema } from '../../shared/wire.js';
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };
let alice: TestClient;

beforeAll(async () => {
  alice = new TestClient(worker, (await adminCreateAccount(worker, TEST_ADMIN_SECRET)).token);
});

describe('POST /v1/batches in workerd on R2', () => {
  it('stores several sessions\' batches with per-item results; a retry is all `exists`; the pull serves each', async () => {
    const sessions = ['wm1', 'wm2', 'wm3'];
    const batches = await Promise.all(sessions.map((s) => makeBatch({ session: s, host: 'h1', seq: 1, meta: metaFor(s) })));
    const bad = { ...(await makeBatch({ session: 'wm4', host: 'h1', seq: 2 })) };
    const r = await alice.call('POST', '/v1/batches', { batches: [...batches, bad] });
    expect(r.status).toBe(200);
    const results = PushBatchesResponseSchema.parse(r.json).results;
    expect(results.map((x) => (x.ok ? x.status : x.error.code))).toEqual(['created', 'created', 'created', 'conflict']);
    const again = PushBatchesResponseSchema.parse((await alice.call('POST', '/v1/batches', { batches })).json).results;
    expect(again.map((x) => x.ok && x.status)).toEqual(['exists', 'exists', 'exists']);
    for (const s of sessions) expect((await alice.pullAll(s)).batches).toHaveLength(1);
  });

  it('takes at most WORKERS_MAX_BATCHES (6) batches per request on Workers (its plans cap storage calls per request), and says so', async () => {
    expect(WORKERS_MAX_BATCHES).toBe(6);
    const over = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES + 1 }, (_, i) => makeBatch({ session: `cap${i}`, host: 'h1', seq: 1, meta: metaFor(`cap${i}`) })));
    const r = await alice.call('POST', '/v1/batches', { batches: over });
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({ code: 'too_large', details: { maxBatches: WORKERS_MAX_BATCHES } });
    expect((await alice.call('GET', '/v1/sessions/cap0')).status).toBe(404); // nothing of the refused request stored
  });

  it('POST /v1/pulls takes one session per request on Workers (one page nears the storage-call cap), and answers it like the single pull', async () => {
    const two = await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'wm1', cursor: {} }, { session: 'wm2', cursor: {} }] });
    expect(two.status).toBe(413);
    expect(two.json.error).toMatchObject({ code: 'too_large', details: { maxSessions: 1 } });
    const one = await alice.call('POST', '/v1/pulls', { sessions: [{ session: 'wm1', cursor: {} }] });
    expect(one.json.results).toEqual([{ ok: true, session: 'wm1', ...(await alice.pull('wm1', {})).json }]);
  });
});
