// The client's batchers against the real app in-process: shared requests, per-item errors, a server's cap, a server without the route.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { ApiClient } from '../../cli/api-client.js';
import { PushBatcher } from '../../cli/sync/push-batcher.js';
import { PullBatcher } from '../../cli/sync/pull-batcher.js';
import { isSessyncError } from '../../shared/errors.js';
import type { PushBatchRequest } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, adminCreateAccount, appFetcher, makeBatch, metaFor } from '../worker/routes-helpers.js';

/** The real app as the client's fetch; `oldServer` stands in for a server from before POST /v1/batches (it answers 404 there, as that server's router does). */
async function client(o: { env?: Record<string, unknown>; oldServer?: boolean } = {}) {
  const app = createApp({ store: new MemoryStore(), adminSecret: TEST_ADMIN_SECRET });
  const target = appFetcher(app, o.env ?? {});
  const { token } = await adminCreateAccount(target, TEST_ADMIN_SECRET);
  const paths: string[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const path = new URL(req.url).pathname;
    paths.push(path);
    if (o.oldServer && (path === '/v1/batches' || path === '/v1/pulls')) return Response.json({ error: { code: 'not_found', message: `no route POST ${path} on this sessync server (API under /v1)`, retryable: false } }, { status: 404 });
    return target.fetch(req);
  }) as typeof fetch;
  return { api: new ApiClient({ url: 'http://sessync.test', token, fetch: fetchFn, retries: 0 }), paths };
}

/**
 * Sessions' pushes at once through the batcher, as a sync run starts them: every one has begun (read its state and
 * file) before the first is ready to send. Each settles with its own answer.
 */
async function pushAll(batcher: PushBatcher, reqs: PushBatchRequest[]) {
  return Promise.allSettled(reqs.map((r) => batcher.around(async () => {
    await null;
    return batcher.push(r);
  })));
}

const batches = (n: number) => Promise.all(Array.from({ length: n }, (_, i) => makeBatch({ session: `pb${i}`, host: 'h1', seq: 1, meta: metaFor(`pb${i}`) })));

describe('PushBatcher', () => {
  it('holds full requests back while maxInFlight are unanswered, and still delivers every push', async () => {
    const { api, paths } = await client();
    let open = 0;
    let most = 0;
    const counted = new Proxy(api, {
      get(t, k) {
        const v = Reflect.get(t, k, t) as unknown;
        if (k !== 'pushBatches' || typeof v !== 'function') return typeof v === 'function' ? v.bind(t) : v;
        return async (...a: unknown[]) => {
          most = Math.max(most, ++open);
          await new Promise((r) => setTimeout(r, 20)); // answered later, so the next requests are ready meanwhile
          try {
            return await (v as (...x: unknown[]) => Promise<unknown>).apply(t, a);
          } finally {
            open--;
          }
        };
      },
    });
    const batcher = new PushBatcher(counted, 2);
    batcher.maxInFlight = 1;
    const out = await pushAll(batcher, await batches(7));
    expect(out.map((o) => o.status === 'fulfilled' && o.value.status)).toEqual(Array(7).fill('created'));
    expect(most).toBe(1);
    expect(paths.filter((p) => p === '/v1/batches')).toHaveLength(4);
  });

  it('sends the batches of sessions pushed at once in one request, and hands each push its own answer', async () => {
    const { api, paths } = await client();
    const batcher = new PushBatcher(api);
    const out = await pushAll(batcher, await batches(5));
    expect(out.map((o) => o.status === 'fulfilled' && o.value.status)).toEqual(Array(5).fill('created'));
    expect(paths.filter((p) => p !== '/v1/admin/accounts')).toEqual(['/v1/batches']);
  });

  it('a refused batch fails only its own push, with the error the single route would have thrown', async () => {
    const { api } = await client();
    const reqs = await batches(3);
    reqs[1] = await makeBatch({ session: 'pb1', host: 'h1', seq: 3 }); // a seq gap: 409 on the single route
    const out = await pushAll(new PushBatcher(api), reqs);
    expect(out[0]).toMatchObject({ status: 'fulfilled' });
    expect(out[2]).toMatchObject({ status: 'fulfilled' });
    const err = (out[1] as PromiseRejectedResult).reason;
    expect(isSessyncError(err, 'conflict')).toBe(true);
    expect(err.message).toMatch(/^server: seq gap/);
    expect(err.retryable).toBe(false);
  });

  it('follows a server\'s lower cap: the request is split and every batch stored', async () => {
    const { api, paths } = await client({ env: { SESSYNC_MAX_BATCHES_PER_PUSH: '2' } });
    const out = await pushAll(new PushBatcher(api), await batches(5));
    expect(out.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(paths.filter((p) => p === '/v1/batches')).toHaveLength(1 + 3); // the refused one, then 2 + 2 + 1
  });

  it('a server without POST /v1/batches gets one request per batch on the single route, as before', async () => {
    const { api, paths } = await client({ oldServer: true });
    // Two batches a request: two requests are out before the first answer says the route is missing.
    const batcher = new PushBatcher(api, 2);
    const out = await pushAll(batcher, await batches(4));
    expect(out.every((o) => o.status === 'fulfilled')).toBe(true);
    const more = await pushAll(batcher, [await makeBatch({ session: 'pb0', host: 'h1', seq: 2 })]);
    expect(more[0]).toMatchObject({ status: 'fulfilled', value: { status: 'created', seq: 2 } });
    const pushes = paths.filter((p) => p !== '/v1/admin/accounts');
    expect(pushes.filter((p) => p === '/v1/batches')).toHaveLength(2); // the two sent before the answer, then never again
    expect(pushes.filter((p) => p.endsWith('/batches') && p !== '/v1/batches')).toHaveLength(5);
  });
});

describe('PullBatcher', () => {
  async function pullAll(batcher: PullBatcher, sessions: string[]) {
    return Promise.allSettled(sessions.map((s) => batcher.around(async () => {
      await null;
      return batcher.pull(s, {});
    })));
  }

  it('asks for the pages of sessions pulled at once in one request; each gets its own page or its own error', async () => {
    const { api, paths } = await client();
    await pushAll(new PushBatcher(api), await batches(3));
    paths.length = 0;
    const out = await pullAll(new PullBatcher(api), ['pb0', 'missing', 'pb2']);
    expect(paths).toEqual(['/v1/pulls']);
    expect(out[0]).toMatchObject({ status: 'fulfilled', value: { more: false, cursor: { h1: 1 } } });
    expect(isSessyncError((out[1] as PromiseRejectedResult).reason, 'not_found')).toBe(true);
    expect((out[2] as PromiseFulfilledResult<{ batches: unknown[] }>).value.batches).toHaveLength(1);
  });

  it('a server without POST /v1/pulls gets one pull per session, as before', async () => {
    const { api, paths } = await client({ oldServer: true });
    await pushAll(new PushBatcher(api), await batches(3));
    paths.length = 0;
    const out = await pullAll(new PullBatcher(api), ['pb0', 'pb1', 'pb2']);
    expect(out.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(paths).toEqual(['/v1/pulls', '/v1/sessions/pb0/pull', '/v1/sessions/pb1/pull', '/v1/sessions/pb2/pull']);
  });
});
