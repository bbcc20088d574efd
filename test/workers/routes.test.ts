// Route tests inside workerd: the real Workers entry (exports.default.fetch) on the R2 binding from wrangler.toml.
import { env, exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChangesResponseSchema, ErrorBodySchema, HealthResponseSchema, PullResponseSchema } from '../../shared/wire.js';
import { keys } from '../../shared/keys.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';

// Set in test/vitest.workers.config.ts as a miniflare binding.
const ADMIN = TEST_ADMIN_SECRET;

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };
const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;

let alice: TestClient;
let account: string;

async function bucketKeys(prefix = ''): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
    out.push(...page.objects.map((o) => o.key));
    if (!page.truncated) return out;
    cursor = page.cursor;
  }
}

beforeAll(async () => {
  const a = await adminCreateAccount(worker, ADMIN);
  account = a.account;
  alice = new TestClient(worker, a.token);
});

describe('routes in workerd on R2', () => {
  it('health answers without a token', async () => {
    const r = await new TestClient(worker).call('GET', '/v1/health');
    expect(HealthResponseSchema.parse(r.json)).toEqual({ service: 'sessync', api: 1 });
  });

  it('push, retry and pull: a retried batch is stored once in R2', async () => {
    const b = await makeBatch({ session: 'w1', host: 'laptop', seq: 1, meta: metaFor('w1') });
    expect((await alice.push(b)).json.status).toBe('created');
    expect((await alice.push(b)).json.status).toBe('exists');
    expect(await bucketKeys(keys.batchPrefix(account, 'w1', 'laptop'))).toEqual([keys.batch(account, 'w1', 'laptop', 1)]);
    const p = PullResponseSchema.parse((await alice.pull('w1')).json);
    expect(p.batches.map((x) => x.body)).toEqual([b.body]);
    const meta = await alice.call('GET', '/v1/sessions/w1');
    expect(meta.json).toMatchObject({ session: 'w1', cwd: '/home/a/src/app', hosts: { laptop: 1 } });
  });

  it('8 concurrent pushers from different hosts lose nothing', async () => {
    const hosts = Array.from({ length: 8 }, (_, i) => `h${i}`);
    await Promise.all(hosts.map(async (host) => {
      for (let seq = 1; seq <= 4; seq++) expect((await alice.push(await makeBatch({ session: 'w8', host, seq }))).status).toBe(201);
    }));
    const { batches, cursor } = await alice.pullAll('w8');
    expect(new Set(batches.map((b) => `${b.envelope.host}/${b.envelope.seq}`)).size).toBe(32);
    expect(cursor).toEqual(Object.fromEntries(hosts.map((h) => [h, 4])));
    const changes = ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json);
    expect(changes.heads.filter((h) => h.session === 'w8')).toHaveLength(8);
  });

  it('a different batch at a taken seq is 409 and changes nothing in R2', async () => {
    await alice.push(await makeBatch({ session: 'w2', host: 'h', seq: 1 }));
    const before = await bucketKeys();
    const r = await alice.push(await makeBatch({ session: 'w2', host: 'h', seq: 1, count: 1, batchId: 'other' }));
    expect(r.status).toBe(409);
    expect(await bucketKeys()).toEqual(before);
  });

  it.each([
    ['no token', () => new TestClient(worker).call('GET', '/v1/whoami'), 401],
    ['wrong token', () => new TestClient(worker, 'sst_wrong').call('GET', '/v1/whoami'), 401],
    ['malformed JSON', () => alice.call('POST', '/v1/sessions/w1/pull', '{'), 400],
    ['traversal in session', () => alice.call('POST', '/v1/sessions/..%2Ftokens/pull', { cursor: {} }), 400],
    ['oversized body', () => alice.call('POST', '/v1/sessions/w1/batches', 'x'.repeat(10 * 1024 * 1024 + 1)), 413],
    ['missing session', () => alice.pull('nope'), 404],
    ['seq gap', async () => alice.push(await makeBatch({ session: 'w1', host: 'laptop', seq: 3 })), 409],
    ['bad admin secret', () => new TestClient(worker, 'wrong').call('POST', '/v1/admin/accounts'), 401],
    ['unknown route', () => alice.call('GET', '/v1/nothing-here'), 404],
  ] as const)('%s -> %i JSON error, nothing stored', async (_name, run, status) => {
    const before = await bucketKeys();
    const r = await run();
    expect(r.status).toBe(status);
    expect(ErrorBodySchema.parse(r.json).error.message.length).toBeGreaterThan(10);
    expect(await bucketKeys()).toEqual(before);
  });
});
