// End-to-end encryption at rest over raw HTTP, run on every store (memory, file system, S3 on radosgw, R2 in workerd); no node:*.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangesResponseSchema, PullResponseSchema, type PushBatchRequest, type StoredBatch } from '../../shared/wire.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { sha256Hex } from '../../worker/sha256.js';
import { decodeBatchRecord, isDamaged } from '../../worker/session-data.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, storedKeys, type Fetcher } from './routes-helpers.js';
import { makeSealedBatch, putAccountKey, randomHex64, sealOf, sealPath, sealedMeta } from './sealed-helpers.js';

/** Text of the plaintext pushes (routes-helpers' entries and meta): none of it may be found at rest on an encrypted account. */
const PLAINTEXT = /entry \d+ of batch|\/home\/a\/src\/app|github\.com\/a\/app|a test session/;

export interface SealingTarget {
  /** The service as a client reaches it. */
  fetcher: Fetcher;
  /** The store behind it, read directly to see what is at rest. */
  store: BlobStore;
  cleanup?: () => Promise<void> | void;
}

/** Every object of the account: its key, its text and its bytes. */
async function atRest(store: BlobStore, account: string): Promise<{ key: string; text: string; body: Uint8Array }[]> {
  const out = [];
  for (const key of await storedKeys(store, `a/${account}/`)) {
    const body = (await store.get(key))!.body;
    out.push({ key, text: new TextDecoder().decode(body), body });
  }
  return out;
}

/** A stored batch's envelope encoding, whichever record form holds it. */
function storedEncoding(body: Uint8Array): string {
  const b = decodeBatchRecord(body);
  if (isDamaged(b)) throw new Error(`stored batch damaged: ${b.damaged}`);
  return b.envelope.encoding;
}

export function describeSealing(name: string, open: () => Promise<SealingTarget>): void {
  describe(`end-to-end encryption at rest [${name}]`, () => {
    let target: SealingTarget;
    const newAccount = async () => {
      const a = await adminCreateAccount(target.fetcher, TEST_ADMIN_SECRET);
      return { client: new TestClient(target.fetcher, a.token), account: a.account };
    };

    beforeAll(async () => {
      target = await open();
    });
    afterAll(async () => {
      await target?.cleanup?.();
    });

    it('an encrypted account stores no plaintext meta or batch: plaintext pushes are refused, sealed ones kept as sent', async () => {
      const { client, account } = await newAccount();
      await putAccountKey(client, 'k1');
      // One sealed meta (one wrapped data key) for the session, sent with every push as a client may.
      const meta = sealedMeta('k1', { projectKey: randomHex64() });
      for (const host of ['laptop', 'desk']) {
        for (let seq = 1; seq <= 3; seq++) {
          const r = await client.push(await makeSealedBatch({ session: 'enc', host, seq, meta }));
          expect(r.status, r.text).toBe(201);
          // What an old or misconfigured client would send: refused whole.
          expect((await client.push(await makeBatch({ session: 'enc', host, seq: seq + 1, meta: metaFor('enc') }))).status).toBe(400);
          expect((await client.push(await makeSealedBatch({ session: 'enc', host, seq: seq + 1, meta: metaFor('enc') }))).status).toBe(400);
        }
      }
      expect((await client.push(await makeBatch({ session: 'fresh', host: 'h', seq: 1, meta: metaFor('fresh') }))).json.error.code).toBe('encryption_required');
      const objects = await atRest(target.store, account);
      expect(objects.filter((o) => o.key.includes('/b/'))).toHaveLength(6);
      for (const o of objects) {
        expect(o.text, o.key).not.toMatch(PLAINTEXT);
        if (o.key.includes('/b/')) expect(storedEncoding(o.body)).toBe('aes-256-gcm');
        if (o.key.endsWith('/meta')) expect(Object.keys(JSON.parse(o.text)).sort()).toEqual(['created', 'projectKey', 'sealed']);
      }
    });

    it('a seal replaces each jsonl batch in place: heads, seqs and cursors unchanged, a racing pull sees old or new, never a torn object', async () => {
      const { client, account } = await newAccount();
      const pushed: PushBatchRequest[] = [];
      for (const host of ['h1', 'h2']) {
        for (let seq = 1; seq <= 3; seq++) {
          const b = await makeBatch({ session: 'conv', host, seq, count: 40, meta: metaFor('conv') });
          expect((await client.push(b)).status).toBe(201);
          pushed.push(b);
        }
      }
      const heads = ChangesResponseSchema.parse((await client.call('GET', '/v1/changes')).json).heads;
      const before = await client.pullAll('conv');
      expect(before.cursor).toEqual({ h1: 3, h2: 3 });
      await putAccountKey(client, 'k1');

      const seals = new Map<string, { old: StoredBatch; sealed: StoredBatch }>();
      for (const b of pushed) seals.set(`${b.envelope.host}/${b.envelope.seq}`, { old: { envelope: b.envelope, body: b.body }, sealed: await sealOf(b) });
      let sealing = true;
      const seen = { old: 0, sealed: 0 };
      const puller = async () => {
        for (let round = 0; sealing || round < 2; round++) {
          // In-process, a request can complete on microtasks alone: without a turn of the event loop each round, the
          // pullers would starve the sealer's first read that needs one (a real client waits on its socket).
          await new Promise((r) => setTimeout(r, 0));
          const p = PullResponseSchema.parse((await client.pull('conv')).json);
          for (const got of p.batches) {
            const s = seals.get(`${got.envelope.host}/${got.envelope.seq}`)!;
            expect(await sha256Hex(got.body)).toBe(got.envelope.sha256);
            const which = got.body === s.old.body ? 'old' : 'sealed';
            expect(got).toEqual({ ...s[which], received: expect.any(Number) }); // sealed in place, received as first stored
            seen[which]++;
          }
        }
      };
      const sealAll = async () => {
        for (const [where, s] of seals) {
          const r = await client.call('PUT', sealPath('conv', s.old.envelope.host, s.old.envelope.seq), s.sealed);
          expect(r.status, `${where}: ${r.text}`).toBe(200);
        }
        const m = await client.call('PUT', '/v1/sessions/conv/meta/seal', sealedMeta('k1'));
        expect(m.status, m.text).toBe(200);
        sealing = false;
      };
      await Promise.all([sealAll(), puller(), puller(), puller()]);
      expect(seen.sealed).toBeGreaterThan(0);

      expect(ChangesResponseSchema.parse((await client.call('GET', '/v1/changes')).json).heads).toEqual(heads);
      // A machine that pulled everything before the seal has nothing to pull again.
      const again = PullResponseSchema.parse((await client.pull('conv', before.cursor)).json);
      expect(again).toEqual({ batches: [], cursor: before.cursor, more: false });
      const after = await client.pullAll('conv');
      expect(after.cursor).toEqual(before.cursor);
      expect(after.batches.map((b) => [b.envelope.host, b.envelope.seq, b.envelope.batchId, b.envelope.entryCount])).toEqual(
        before.batches.map((b) => [b.envelope.host, b.envelope.seq, b.envelope.batchId, b.envelope.entryCount]),
      );
      for (const o of await atRest(target.store, account)) expect(o.text, o.key).not.toMatch(PLAINTEXT);
    });
  });
}
