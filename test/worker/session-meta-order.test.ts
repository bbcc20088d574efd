// Session meta vs head: the meta is stored before the head that puts the session on /v1/changes, and a session
// with batches but no meta answers a clear 404 instead of an empty header.
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { ChangesResponseSchema, ErrorBodySchema, SessionMetaResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const ADMIN = TEST_ADMIN_SECRET;

/**
 * A real MemoryStore that records the order of its writes and can be told to fail the next write of a key
 * ending in a given suffix: a stand-in (mock) for a backend that fails between two writes of one request.
 */
class RecordingStore extends MemoryStore {
  writes: string[] = [];
  failNext: string | null = null;
  override async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    if (this.failNext !== null && key.endsWith(this.failNext)) {
      this.failNext = null;
      throw new SessyncError('unavailable', `injected failure writing ${key}`, { retryable: true });
    }
    this.writes.push(key);
    return super.putIfAbsent(key, body);
  }
}

let store: RecordingStore;
let alice: TestClient;
let account: string;

beforeEach(async () => {
  store = new RecordingStore();
  const f = appFetcher(createApp({ store, adminSecret: ADMIN }));
  const a = await adminCreateAccount(f, ADMIN);
  account = a.account;
  alice = new TestClient(f, a.token);
  store.writes = [];
});

describe('push: meta before head', () => {
  it('writes the batch, then the meta, then the head', async () => {
    const r = await alice.push(await makeBatch({ session: 's1', host: 'h1', seq: 1, meta: metaFor('s1') }));
    expect(r.status).toBe(201);
    expect(store.writes).toEqual([keys.batch(account, 's1', 'h1', 1), keys.sessionMeta(account, 's1'), keys.head(account, 's1', 'h1', 1)]);
  });

  it('a meta write that fails leaves no head: the session stays off /v1/changes until the retry stores both', async () => {
    const req = await makeBatch({ session: 's2', host: 'h1', seq: 1, meta: metaFor('s2') });
    store.failNext = keys.sessionMeta(account, 's2');
    const failed = await alice.push(req);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json).heads).toEqual([]);

    const retried = await alice.push(req);
    expect(retried.status).toBe(200); // the batch was stored by the first attempt
    expect(ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json).heads).toEqual([{ session: 's2', host: 'h1', seq: 1 }]);
    const meta = await alice.call('GET', '/v1/sessions/s2');
    expect(meta.status).toBe(200);
    expect(SessionMetaResponseSchema.parse(meta.json)).toMatchObject({ projectKey: 'github.com/a/app', cwd: '/home/a/src/app', hosts: { h1: 1 } });
  });
});

describe('push: a batch refused after its write', () => {
  it('another batch already at the seq (and no meta yet): 409, no head, the meta it wrote is kept as first stored and the stored batch\'s retry completes the session', async () => {
    // A batch stored by a push whose meta write failed: the session has a batch, no meta, no head.
    const first = await makeBatch({ session: 's3', host: 'h1', seq: 1, count: 2, meta: metaFor('s3') });
    store.failNext = keys.sessionMeta(account, 's3');
    expect((await alice.push(first)).status).toBeGreaterThanOrEqual(500);
    expect(await store.get(keys.sessionMeta(account, 's3'))).toBeNull();

    // Another batch at that seq is refused after the write of its batch and meta (one round), leaving only the meta.
    const other = await alice.push(await makeBatch({ session: 's3', host: 'h1', seq: 1, count: 3, batchId: 'other', meta: metaFor('s3', '/home/a/elsewhere') }));
    expect(other.status).toBe(409);
    expect(ErrorBodySchema.parse(other.json).error.message).toMatch(/different batch at seq 1/);
    expect(ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json).heads).toEqual([]);
    expect(await store.get(keys.head(account, 's3', 'h1', 1))).toBeNull();

    // The first push's retry stores its head; the meta stays as first stored, as with any two pushers of one session id.
    expect((await alice.push(first)).status).toBe(200);
    expect(ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json).heads).toEqual([{ session: 's3', host: 'h1', seq: 1 }]);
    const meta = await alice.call('GET', '/v1/sessions/s3');
    expect(meta.status).toBe(200);
    expect(SessionMetaResponseSchema.parse(meta.json)).toMatchObject({ cwd: '/home/a/elsewhere', hosts: { h1: 1 } });
    expect((await alice.pullAll('s3')).batches.map((b: { envelope: { batchId: string } }) => b.envelope.batchId)).toEqual([first.envelope.batchId]);
  });
});

describe('GET /v1/sessions/:id', () => {
  it('batches without meta answer 404 with a message naming the missing metadata', async () => {
    expect((await alice.push(await makeBatch({ session: 'bare', host: 'h1', seq: 1 }))).status).toBe(201);
    const r = await alice.call('GET', '/v1/sessions/bare');
    expect(r.status).toBe(404);
    const err = ErrorBodySchema.parse(r.json).error;
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(/session bare has batches but no metadata/);
  });

  it('a later push carrying the meta makes the session readable', async () => {
    await alice.push(await makeBatch({ session: 'late', host: 'h1', seq: 1 }));
    await alice.push(await makeBatch({ session: 'late', host: 'h1', seq: 2, meta: metaFor('late', '/home/a/other') }));
    const r = await alice.call('GET', '/v1/sessions/late');
    expect(r.status).toBe(200);
    expect(SessionMetaResponseSchema.parse(r.json)).toMatchObject({ session: 'late', cwd: '/home/a/other', hosts: { h1: 2 } });
  });
});
