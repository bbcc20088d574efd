// Pushes as frames inside workerd: the real Workers entry on R2, the bucket read through the binding, and its cap.
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { concatChunks, encodeFrames, FRAMES_TYPE } from '../../shared/batch-frames.js';
import { R2Store } from '../../worker/store/r2-store.js';
import { WORKERS_MAX_BATCHES } from '../../worker/routes/multi-batches.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, makeBatch, metaFor, type Fetcher } from '../worker/routes-helpers.js';
import { describePushFrames, frameOf } from '../worker/push-frames.case.js';

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };

describePushFrames('R2 in workerd', async () => ({ fetcher: worker, store: new R2Store((env as unknown as { BUCKET: R2Bucket }).BUCKET) }));

describe('frames on Workers', () => {
  it('more frames than the Workers cap (WORKERS_MAX_BATCHES) is a 413 naming the cap, and stores nothing', async () => {
    const client = new TestClient(worker, (await adminCreateAccount(worker, TEST_ADMIN_SECRET)).token);
    const over = await Promise.all(Array.from({ length: WORKERS_MAX_BATCHES + 1 }, (_, i) => makeBatch({ session: `fcap${i}`, host: 'h1', seq: 1, meta: metaFor(`fcap${i}`) })));
    const body = concatChunks(encodeFrames(over.map(frameOf)));
    const r = await client.call('POST', '/v1/batches', body, { 'content-type': FRAMES_TYPE });
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({ code: 'too_large', details: { maxBatches: WORKERS_MAX_BATCHES } });
    expect((await client.call('GET', '/v1/sessions/fcap0')).status).toBe(404);
  });
});
