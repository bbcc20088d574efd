// Remote deletion inside workerd on the R2 binding: the same case as on Node, and the real Workers entry's routes.
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { R2Store } from '../../worker/store/r2-store.js';
import { describeSessionDelete } from '../ops/session-delete.case.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';

const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;
const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };

describeSessionDelete('R2 in workerd', async () => ({ store: new R2Store(bucket) }));

describe('DELETE /v1/sessions/:session through the Workers entry', () => {
  it('deletes, lists the tombstone on /v1/changes and refuses a push with 410', async () => {
    const a = await adminCreateAccount(worker, TEST_ADMIN_SECRET);
    const alice = new TestClient(worker, a.token);
    expect((await alice.push(await makeBatch({ session: 'w-del', host: 'h1', seq: 1, meta: metaFor('w-del') }))).status).toBe(201);
    const r = await alice.call('DELETE', '/v1/sessions/w-del', { host: 'h1' });
    expect(r.json).toMatchObject({ session: 'w-del', complete: true, host: 'h1' });
    const changes = await alice.call('GET', '/v1/changes');
    expect(changes.json.heads).toEqual([]);
    expect(changes.json.deleted).toEqual([expect.objectContaining({ session: 'w-del', host: 'h1' })]);
    expect((await alice.push(await makeBatch({ session: 'w-del', host: 'h2', seq: 1 }))).status).toBe(410);
  });
});
