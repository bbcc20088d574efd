// `received`, the order the server vouches for, on every store: set when a batch is first stored, kept by a retry and
// a seal, served by both pull routes, absent from records an older server wrote. No node:* (it also runs in workerd).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PullManyResponseSchema, PullResponseSchema } from '../../shared/wire.js';
import { keys } from '../../shared/keys.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { decodeBatchRecord, encodeBatchRecord, isDamaged, type StoredBatchRecord } from '../../worker/session-data.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from './routes-helpers.js';
import { putAccountKey, sealOf, sealPath } from './sealed-helpers.js';

export interface ReceivedTarget {
  fetcher: Fetcher;
  /** The store behind the service, to read and plant records directly. */
  store: BlobStore;
  cleanup?: () => Promise<void> | void;
}

const encoder = new TextEncoder();

export function describeReceived(name: string, open: () => Promise<ReceivedTarget>): void {
  describe(`the server's received time of a batch [${name}]`, () => {
    let target: ReceivedTarget;
    const newAccount = async () => {
      const a = await adminCreateAccount(target.fetcher, TEST_ADMIN_SECRET);
      return { client: new TestClient(target.fetcher, a.token), account: a.account };
    };
    /** The stored record (either form) and its `received`. */
    const stored = async (key: string): Promise<{ received?: unknown; record: StoredBatchRecord }> => {
      const record = decodeBatchRecord((await target.store.get(key))!.body);
      if (isDamaged(record)) throw new Error(`${key}: ${record.damaged}`);
      return { received: record.fields.received, record };
    };
    const pulled = async (client: TestClient, session: string) => PullResponseSchema.parse((await client.pull(session)).json).batches;

    beforeAll(async () => {
      target = await open();
    });
    afterAll(async () => {
      await target?.cleanup?.();
    });

    it('the write that first stores a batch records the server clock; both pull routes serve it', async () => {
      const { client, account } = await newAccount();
      const before = Date.now();
      expect((await client.push(await makeBatch({ session: 'r1', host: 'h1', seq: 1, meta: metaFor('r1') }))).status).toBe(201);
      const many = await client.call('POST', '/v1/batches', { batches: [await makeBatch({ session: 'r1', host: 'h2', seq: 1, meta: metaFor('r1') })] });
      expect(many.json.results[0], many.text).toMatchObject({ ok: true, status: 'created' });
      const after = Date.now();
      const rec = await stored(keys.batch(account, 'r1', 'h1', 1));
      expect(typeof rec.received).toBe('number');
      const batches = await pulled(client, 'r1');
      expect(batches.map((b) => b.envelope.host)).toEqual(['h1', 'h2']);
      for (const b of batches) {
        expect(b.received).toBeGreaterThanOrEqual(before);
        expect(b.received).toBeLessThanOrEqual(after);
      }
      expect(batches[0]!.received).toBe(rec.received);
      const multi = PullManyResponseSchema.parse((await client.call('POST', '/v1/pulls', { sessions: [{ session: 'r1', cursor: {} }] })).json).results[0]!;
      expect(multi.ok && multi.batches.map((b) => b.received)).toEqual(batches.map((b) => b.received));
    });

    it('a retry that answers `exists` leaves the first received as it is', async () => {
      const { client, account } = await newAccount();
      const b = await makeBatch({ session: 'r2', host: 'h1', seq: 1, meta: metaFor('r2') });
      expect((await client.push(b)).status).toBe(201);
      // A first store long ago: a retry that wrote its own time would show here.
      const key = keys.batch(account, 'r2', 'h1', 1);
      const { record } = await stored(key);
      await target.store.put(key, encodeBatchRecord({ ...record, fields: { ...record.fields, received: 1234 } }));
      expect((await client.push(b)).json.status).toBe('exists');
      const many = await client.call('POST', '/v1/batches', { batches: [b] });
      expect(many.json.results[0]).toMatchObject({ ok: true, status: 'exists' });
      expect((await stored(key)).received).toBe(1234);
      expect((await pulled(client, 'r2'))[0]!.received).toBe(1234);
    });

    it('a record an older server wrote (no received) is served without one', async () => {
      const { client, account } = await newAccount();
      const b = await makeBatch({ session: 'r3', host: 'h1', seq: 1, meta: metaFor('r3') });
      await client.push(b);
      await target.store.put(keys.batch(account, 'r3', 'h1', 1), encoder.encode(JSON.stringify({ envelope: b.envelope, body: b.body })));
      const [got] = await pulled(client, 'r3');
      expect(got!.body).toBe(b.body);
      expect(got).not.toHaveProperty('received');
    });

    it('sealing a batch in place (an account converted to encryption) keeps when it was received', async () => {
      const { client, account } = await newAccount();
      const b = await makeBatch({ session: 'r4', host: 'h1', seq: 1, meta: metaFor('r4') });
      await client.push(b);
      const key = keys.batch(account, 'r4', 'h1', 1);
      const first = (await stored(key)).received;
      await putAccountKey(client, 'k1');
      const r = await client.call('PUT', sealPath('r4', 'h1', 1), await sealOf({ envelope: b.envelope, body: b.body }));
      expect(r.status, r.text).toBe(200);
      expect(typeof first).toBe('number');
      expect((await stored(key)).received).toBe(first);
    });
  });
}
