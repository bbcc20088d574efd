// Route behaviour under concurrency, run against every store (memory, file system, S3 on radosgw): nothing lost, nothing stored twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { keys } from '../../shared/keys.js';
import { ChangesResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, storedKeys, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

const ADMIN = TEST_ADMIN_SECRET;

const keysUnder = storedKeys;

export function describeRouteRaces(name: string, open: () => Promise<{ store: BlobStore; cleanup?: () => Promise<void> | void }>): void {
  describe(`push races [${name}]`, () => {
    let store: BlobStore;
    let cleanup: (() => Promise<void> | void) | undefined;
    let alice: TestClient;
    let account: string;

    beforeAll(async () => {
      ({ store, cleanup } = await open());
      const f = appFetcher(createApp({ store, adminSecret: ADMIN }));
      const a = await adminCreateAccount(f, ADMIN);
      account = a.account;
      alice = new TestClient(f, a.token);
    });
    afterAll(async () => {
      await cleanup?.();
    });

    it('a batch retried 3 times in a row and 6 times at once is stored once', async () => {
      const b = await makeBatch({ session: 'retry', host: 'h', seq: 1, meta: metaFor('retry') });
      expect((await alice.push(b)).json.status).toBe('created');
      for (let i = 0; i < 3; i++) expect((await alice.push(b)).json.status).toBe('exists');
      const b2 = await makeBatch({ session: 'retry', host: 'h', seq: 2 });
      const answers = await Promise.all(Array.from({ length: 6 }, () => alice.push(b2)));
      expect(answers.map((r) => r.json.status).sort()).toEqual(['created', 'exists', 'exists', 'exists', 'exists', 'exists']);
      expect(await keysUnder(store, keys.batchPrefix(account, 'retry', 'h'))).toEqual([keys.batch(account, 'retry', 'h', 1), keys.batch(account, 'retry', 'h', 2)]);
      expect((await alice.pullAll('retry')).batches).toHaveLength(2);
    });

    it('different batches racing for one seq: exactly one is stored, the others get 409', async () => {
      const contenders = await Promise.all(Array.from({ length: 6 }, (_, i) => makeBatch({ session: 'race', host: 'h', seq: 1, count: i + 1, batchId: `c${i}` })));
      const answers = await Promise.all(contenders.map((b) => alice.push(b)));
      const winners = answers.flatMap((r, i) => (r.status === 201 ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(answers.filter((r) => r.status === 409)).toHaveLength(5);
      const pulled = await alice.pullAll('race');
      expect(pulled.batches.map((b) => b.body)).toEqual([contenders[winners[0]!]!.body]);
    });

    it('8 concurrent pushers to one session from different hosts lose nothing', async () => {
      const hosts = Array.from({ length: 8 }, (_, i) => `host-${i}`);
      const perHost = 6;
      await Promise.all(
        hosts.map(async (host) => {
          for (let seq = 1; seq <= perHost; seq++) {
            const r = await alice.push(await makeBatch({ session: 'shared', host, seq, count: 4, meta: metaFor('shared') }));
            expect(r.status, r.text).toBe(201);
          }
        }),
      );
      const { batches, cursor } = await alice.pullAll('shared');
      expect(new Set(batches.map((b) => `${b.envelope.host}/${b.envelope.seq}`)).size).toBe(hosts.length * perHost);
      expect(batches).toHaveLength(hosts.length * perHost);
      const all = Object.fromEntries(hosts.map((h) => [h, perHost]));
      expect(cursor).toEqual(all);
      expect((await alice.call('GET', '/v1/sessions/shared')).json.hosts).toEqual(all);
      const changes = ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json);
      const shared = changes.heads.filter((h) => h.session === 'shared').sort((a, b) => a.host.localeCompare(b.host));
      expect(shared).toEqual(hosts.map((host) => ({ session: 'shared', host, seq: perHost })));
      // One head key per host is left once the pushes settle.
      expect(await keysUnder(store, keys.sessionHeadsPrefix(account, 'shared'))).toHaveLength(hosts.length);
    });
  });
}
