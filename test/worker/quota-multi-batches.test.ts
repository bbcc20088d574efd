// The account quota's usage counter when it has to be counted again (missing or damaged): a multi-batch push over the file-system store still answers (the group commit never stalls), and the counter saved is what is stored, not that plus the request's bytes again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { keys } from '../../shared/keys.js';
import { countUsage } from '../../worker/quota.js';
import { PushBatchesResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(quota: Record<string, number>) {
  const dir = mkdtempSync(join(tmpdir(), 'sessync-quota-multi-'));
  dirs.push(dir);
  const store = new FsStore(dir);
  const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
  const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
  const admin = new TestClient(f, TEST_ADMIN_SECRET);
  expect((await admin.call('PUT', `/v1/admin/accounts/${a.account}/quota`, quota)).status).toBe(200);
  return { store, account: a.account, client: new TestClient(f, a.token), admin };
}

/** The request, or a failure naming the hang: a group commit whose writes never flush answers nothing at all. */
function answered<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer in 15 s: the group commit stalled`)), 15_000);
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

async function savedBytes(store: FsStore, account: string): Promise<number> {
  const stored = await store.get(keys.usage(account));
  expect(stored, 'the usage counter is saved').not.toBeNull();
  return (JSON.parse(new TextDecoder().decode(stored!.body)) as { bytes: number }).bytes;
}

const newSessions = (n: number, count = 3) => Promise.all(Array.from({ length: n }, (_, i) => makeBatch({ session: `s${i}`, host: 'h1', seq: 1, count, meta: metaFor(`s${i}`) })));

describe('POST /v1/batches with an account quota, file-system store', () => {
  for (const damage of ['missing', 'damaged'] as const) {
    it(`answers when the usage counter is ${damage} and has to be counted again, and saves the count`, async () => {
      const { store, account, client, admin } = await setup({ maxBytes: 10_000_000 });
      // Something already stored, so the recount has bytes to find.
      expect((await client.call('POST', '/v1/batches', { batches: await newSessions(1) })).status).toBe(200);
      const before = (await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes as number;
      expect(before).toBeGreaterThan(0);
      if (damage === 'missing') await store.delete(keys.usage(account));
      else await store.put(keys.usage(account), new TextEncoder().encode('not json'));

      const batches = (await newSessions(4)).slice(1).map((b, i) => ({ ...b, envelope: { ...b.envelope, session: `t${i}` }, meta: metaFor(`t${i}`) }));
      const r = await answered(client.call('POST', '/v1/batches', { batches }), `a ${batches.length}-batch push with a ${damage} counter`);
      expect(r.status, r.text).toBe(200);
      expect(PushBatchesResponseSchema.parse(r.json).results.every((x) => x.ok)).toBe(true);
      // The recount was saved at the request's end: exactly what is stored now, this request's batches once.
      const saved = await savedBytes(store, account);
      expect(saved).toBeGreaterThan(before);
      expect(saved).toBe((await countUsage(store, account)).bytes);
      expect((await admin.call('GET', `/v1/admin/accounts/${account}/quota`)).json.usage.bytes).toBe(saved);
    });

    it(`a single-batch push with a ${damage} counter saves the count as stored`, async () => {
      const { store, account, client } = await setup({ maxBytes: 10_000_000 });
      expect((await client.call('POST', '/v1/batches', { batches: await newSessions(1) })).status).toBe(200);
      if (damage === 'missing') await store.delete(keys.usage(account));
      else await store.put(keys.usage(account), new TextEncoder().encode('not json'));
      const r = await client.push(await makeBatch({ session: 'single', host: 'h1', seq: 1, meta: metaFor('single') }));
      expect(r.status, r.text).toBe(201);
      expect(await savedBytes(store, account)).toBe((await countUsage(store, account)).bytes);
    });
  }
});
