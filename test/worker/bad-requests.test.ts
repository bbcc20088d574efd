// Every kind of bad request gets a clear 4xx JSON error, stores nothing, and never a 5xx (Node, MemoryStore).
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { ErrorBodySchema, LIMITS, type PushBatchRequest } from '../../shared/wire.js';
import { sha256Hex } from '../../worker/sha256.js';
import { TEST_ADMIN_SECRET, TestClient, storeSnapshot, adminCreateAccount, appFetcher, entryLine, makeBatch, metaFor, type Fetcher } from './routes-helpers.js';

const ADMIN = TEST_ADMIN_SECRET;
const BASE = 'http://sessync.test';

let store: MemoryStore;
let fetcher: Fetcher;
let alice: TestClient;
let bob: TestClient;
let aliceAccount: string;

const snapshot = () => storeSnapshot(store);

/** A push of batch 2 of host h in session s1 (batch 1 exists), changed by `edit`, with the hash recomputed unless `keepSha`. */
async function push2(edit: (r: PushBatchRequest) => void, opts: { keepSha?: boolean } = {}): Promise<unknown> {
  const req = await makeBatch({ session: 's1', host: 'h', seq: 2, meta: metaFor('s1') });
  edit(req);
  if (!opts.keepSha) req.envelope.sha256 = await sha256Hex(req.body);
  return req;
}

function raw(method: string, path: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Response> {
  return Promise.resolve(fetcher.fetch(new Request(BASE + path, { method, ...init })));
}

interface Case {
  name: string;
  status: number;
  message: RegExp;
  run: () => Promise<{ status: number; json: any; text?: string }>;
}

const asResult = async (res: Response) => {
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text), text };
};

const cases: Case[] = [
  { name: 'malformed JSON', status: 400, message: /not valid JSON/, run: () => alice.call('POST', '/v1/sessions/s1/batches', '{"envelope": {') },
  { name: 'empty body', status: 400, message: /body is empty/, run: () => alice.call('POST', '/v1/sessions/s1/batches', '') },
  { name: 'JSON that is not an object', status: 400, message: /expected object/, run: () => alice.call('POST', '/v1/sessions/s1/batches', '[1,2]') },
  { name: 'wrong type: seq as a string', status: 400, message: /envelope\.seq/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => ((r.envelope as any).seq = '2'))) },
  { name: 'unknown field', status: 400, message: /unrecognized key|Unrecognized key/i, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => ((r as any).extra = 1))) },
  { name: 'seq 0', status: 400, message: /envelope\.seq/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.envelope.seq = 0))) },
  { name: 'seq past the key width', status: 400, message: /envelope\.seq/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.envelope.seq = 1e12))) },
  { name: 'invalid UTF-8 body', status: 400, message: /UTF-8/, run: () => raw('POST', '/v1/sessions/s1/batches', { headers: { authorization: `Bearer ${alice.token}` }, body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }).then(asResult) },
  {
    name: 'oversized body (Content-Length)', status: 413, message: /larger than/,
    run: () => alice.call('POST', '/v1/sessions/s1/batches', 'x'.repeat(LIMITS.maxRequestBytes + 1)),
  },
  {
    name: 'oversized body streamed without Content-Length', status: 413, message: /larger than/,
    run: () => {
      const chunk = new Uint8Array(1024 * 1024).fill(0x20);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (sent++ > 12) ctl.close();
          else ctl.enqueue(chunk);
        },
      });
      return raw('POST', '/v1/sessions/s1/batches', { headers: { authorization: `Bearer ${alice.token}` }, body, duplex: 'half' }).then(asResult);
    },
  },
  { name: 'too many entries', status: 400, message: /entryCount/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = Array.from({ length: LIMITS.maxEntriesPerBatch + 1 }, (_, i) => JSON.stringify({ type: 'label', id: `x${i}`, parentId: null, timestamp: 't', targetId: 'x0', label: 'l' })).join('\n');
    r.envelope.entryCount = LIMITS.maxEntriesPerBatch + 1;
  })) },
  { name: 'entry too big', status: 413, message: /entry is larger than/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = JSON.stringify(entryLine('h', 2, 0, { data: 'y'.repeat(LIMITS.maxEntryBytes) })) + '\n';
    r.envelope.entryCount = 1;
  })) },
  { name: 'bad entry id (traversal)', status: 400, message: /entry id "\.\.\/x" is not valid/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = JSON.stringify(entryLine('h', 2, 0, { id: '../x' })) + '\n';
    r.envelope.entryCount = 1;
  })) },
  { name: 'entry without an id', status: 400, message: /line 1: message entry without an "id" string/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = JSON.stringify({ type: 'message', parentId: null, timestamp: 't' }) + '\n';
    r.envelope.entryCount = 1;
  })) },
  { name: 'body line that is not JSON', status: 400, message: /line 2 is not valid JSON/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = JSON.stringify(entryLine('h', 2, 0)) + '\n{oops\n';
    r.envelope.entryCount = 2;
  })) },
  { name: 'entry missing a field its type needs', status: 400, message: /line 1: model_change without "provider"/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = JSON.stringify({ type: 'model_change', id: 'm1', parentId: null, timestamp: 't' }) + '\n';
    r.envelope.entryCount = 1;
  })) },
  { name: 'session header sent as an entry', status: 400, message: /line 1: a second session header/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => {
    r.body = JSON.stringify({ type: 'session', id: 'abc', parentId: null, timestamp: 't', cwd: '/' }) + '\n';
    r.envelope.entryCount = 1;
  })) },
  { name: 'sha256 mismatch', status: 400, message: /sha256 does not match/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.body = r.body.replace('entry 0', 'entry X')), { keepSha: true })) },
  { name: 'entryCount mismatch', status: 400, message: /entryCount is 4 but the body has 3/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.envelope.entryCount = 4))) },
  { name: 'ciphertext that is not base64', status: 400, message: /base64/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.envelope.encoding = 'aes-256-gcm'))) },
  { name: 'session in path differs from envelope', status: 400, message: /does not match the session in the URL/, run: async () => alice.call('POST', '/v1/sessions/s2/batches', await push2(() => undefined)) },
  { name: 'traversal in session path (%2F)', status: 400, message: /session id "\.\.\/\.\.\/tokens" is not valid/, run: async () => alice.call('POST', '/v1/sessions/..%2F..%2Ftokens/batches', await push2(() => undefined)) },
  // URL parsing resolves a `..` segment away before routing: it reaches no session route at all.
  { name: 'traversal in session path (.. segment)', status: 404, message: /no route POST \/v1\/pull/, run: async () => alice.call('POST', '/v1/sessions/%2E%2E/pull', { cursor: {} }) },
  { name: 'dots in session path', status: 400, message: /session id "s\.\.1" is not valid/, run: async () => alice.call('POST', '/v1/sessions/s..1/pull', { cursor: {} }) },
  { name: 'control character in session path', status: 400, message: /session id "s1\\u0000" is not valid/, run: () => alice.call('POST', '/v1/sessions/s1%00/pull', { cursor: {} }) },
  { name: 'newline in session path', status: 400, message: /session id "s\\nx" is not valid/, run: () => alice.call('GET', '/v1/sessions/s%0Ax') },
  { name: 'slash in session path', status: 404, message: /no route POST/, run: () => alice.call('POST', '/v1/sessions/a/b/pull', { cursor: {} }) },
  { name: 'traversal in envelope host', status: 400, message: /envelope\.host: host id/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.envelope.host = '../h'))) },
  { name: 'slash in envelope session', status: 400, message: /envelope\.session: session id/, run: async () => alice.call('POST', '/v1/sessions/s1/batches', await push2((r) => (r.envelope.session = 's1/meta'))) },
  { name: 'no token', status: 401, message: /missing bearer token/, run: async () => new TestClient(fetcher).push((await push2(() => undefined)) as PushBatchRequest) },
  { name: 'wrong token', status: 401, message: /token not recognised/, run: async () => new TestClient(fetcher, 'sst_not-a-real-token').push((await push2(() => undefined)) as PushBatchRequest) },
  { name: 'malformed Authorization header', status: 401, message: /must be "Bearer <token>"/, run: () => alice.call('GET', '/v1/whoami', undefined, { authorization: 'Basic abc' }) },
  { name: "another account's session (pull)", status: 404, message: /session s1 not found/, run: () => bob.pull('s1') },
  { name: "another account's session (meta)", status: 404, message: /session s1 not found/, run: () => bob.call('GET', '/v1/sessions/s1') },
  { name: 'replayed seq with different content', status: 409, message: /different batch at seq 1/, run: async () => alice.push(await makeBatch({ session: 's1', host: 'h', seq: 1, count: 2, batchId: 'again' })) },
  { name: 'seq gap', status: 409, message: /seq gap: host h has no batch 4/, run: async () => alice.push(await makeBatch({ session: 's1', host: 'h', seq: 5 })) },
  { name: 'seq gap on a new host', status: 409, message: /has no batch 1/, run: async () => alice.push(await makeBatch({ session: 's1', host: 'other', seq: 2 })) },
  { name: 'bad cursor: negative', status: 400, message: /cursor\.h/, run: () => alice.pull('s1', { h: -1 }) },
  { name: 'bad cursor: not an integer', status: 400, message: /cursor\.h/, run: () => alice.call('POST', '/v1/sessions/s1/pull', { cursor: { h: 1.5 } }) },
  { name: 'bad cursor: host name', status: 400, message: /cursor/, run: () => alice.call('POST', '/v1/sessions/s1/pull', { cursor: { '../x': 1 } }) },
  { name: 'bad cursor: not an object', status: 400, message: /cursor/, run: () => alice.call('POST', '/v1/sessions/s1/pull', { cursor: 'h:1' }) },
  { name: 'bad changes page token', status: 400, message: /page token/, run: () => alice.call('GET', '/v1/changes?page=..%2F..%2Ftokens') },
  { name: 'unknown route', status: 404, message: /no route GET \/v1\/nope/, run: () => alice.call('GET', '/v1/nope') },
  { name: 'wrong method on a route', status: 404, message: /no route GET/, run: () => alice.call('GET', '/v1/sessions/s1/batches') },
  { name: 'bad admin secret', status: 401, message: /admin secret does not match/, run: () => new TestClient(fetcher, 'not-the-secret').call('POST', '/v1/admin/accounts', {}) },
  { name: 'user token on an admin route', status: 401, message: /admin secret does not match/, run: () => alice.call('POST', '/v1/admin/accounts', {}) },
  { name: 'no admin secret', status: 401, message: /missing admin secret/, run: () => new TestClient(fetcher).call('POST', '/v1/admin/accounts', {}) },
  { name: 'admin: unknown field', status: 400, message: /create account/, run: () => new TestClient(fetcher, ADMIN).call('POST', '/v1/admin/accounts', { name: 'x', admin: true }) },
  { name: 'admin: token for a missing account', status: 404, message: /account acct-missing not found/, run: () => new TestClient(fetcher, ADMIN).call('POST', '/v1/admin/accounts/acct-missing/tokens') },
  { name: 'admin: traversal in account', status: 400, message: /account id/, run: () => new TestClient(fetcher, ADMIN).call('POST', '/v1/admin/accounts/..%2Ftokens/tokens') },
];

beforeAll(async () => {
  store = new MemoryStore();
  fetcher = appFetcher(createApp({ store, adminSecret: ADMIN }));
  const a = await adminCreateAccount(fetcher, ADMIN);
  aliceAccount = a.account;
  alice = new TestClient(fetcher, a.token);
  bob = new TestClient(fetcher, (await adminCreateAccount(fetcher, ADMIN)).token);
  expect((await alice.push(await makeBatch({ session: 's1', host: 'h', seq: 1, meta: metaFor('s1') }))).status).toBe(201);
});

describe(`${cases.length} kinds of bad request`, () => {
  it('covers at least 20 kinds', () => expect(cases.length).toBeGreaterThanOrEqual(20));

  it.each(cases)('$name -> $status, clear message, nothing stored', async (c) => {
    const before = await snapshot();
    const r = await c.run();
    expect(r.status, JSON.stringify(r.json)).toBe(c.status);
    const body = ErrorBodySchema.parse(r.json);
    expect(body.error.message).toMatch(c.message);
    expect(body.error.retryable).toBe(false);
    expect(await snapshot()).toEqual(before);
    expect(aliceAccount).toBeTruthy();
  });
});
