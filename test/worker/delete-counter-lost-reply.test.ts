// A session deletion whose usage-counter write lands but reports a failure: the freed bytes are taken off once, not twice.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobBody, BlobStore } from '../../worker/store/blob-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { countUsage } from '../../worker/quota.js';
import { keys } from '../../shared/keys.js';
import { SessyncError } from '../../shared/errors.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from './routes-helpers.js';

/** Mock of a flaky backend: a usage-counter write that lands and then reports a failure (its reply lost). */
class LostReplyStore extends MemoryStore {
  loseUsageReplies = 0;
  override async put(key: string, body: BlobBody): Promise<void> {
    await super.put(key, body);
    if (key.includes('usage') && this.loseUsageReplies > 0) {
      this.loseUsageReplies--;
      throw new SessyncError('unavailable', 'injected: reply lost after the write');
    }
  }
}

async function saved(store: BlobStore, account: string): Promise<number | null> {
  const o = await store.get(keys.usage(account));
  return o ? (JSON.parse(new TextDecoder().decode(o.body)) as { bytes: number }).bytes : null;
}

describe('session deletion and the usage counter (memory store with a lost-reply mock)', () => {
  it('the step-end counter write lands but reports failure: the bytes of the gone session are taken off once', async () => {
    const store = new LostReplyStore();
    const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
    const a = await adminCreateAccount(f, TEST_ADMIN_SECRET);
    expect((await new TestClient(f, TEST_ADMIN_SECRET).call('PUT', `/v1/admin/accounts/${a.account}/quota`, { maxBytes: 10_000_000 })).status).toBe(200);
    const client = new TestClient(f, a.token);
    for (let seq = 1; seq <= 3; seq++) expect((await client.push(await makeBatch({ session: 'gone', host: 'h1', seq, ...(seq === 1 ? { meta: metaFor('gone') } : {}) }))).status).toBe(201);
    expect((await client.push(await makeBatch({ session: 'kept', host: 'h1', seq: 1, meta: metaFor('kept'), count: 40 }))).status).toBe(201);
    store.loseUsageReplies = 1;
    const r = await client.call('DELETE', '/v1/sessions/gone', { host: 'h1' });
    expect(r.status).toBe(503); // the lost reply is a failure the client retries
    expect(await saved(store, a.account)).toBe((await countUsage(store, a.account)).bytes);
    const again = await client.call('DELETE', '/v1/sessions/gone', { host: 'h1' });
    expect(again.status).toBe(200);
    expect(await saved(store, a.account)).toBe((await countUsage(store, a.account)).bytes);
  });
});
