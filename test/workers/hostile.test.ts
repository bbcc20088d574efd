// The hostile-input table inside workerd: the real Workers entry on R2, the same cases as on Node, nothing stored in the bucket.
import { env, exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_CASES, expectHostileAnswer, hostileRequest, setUpHostile, type HostileContext } from '../worker/hostile-cases.js';
import { TEST_ADMIN_SECRET, type Fetcher } from '../worker/routes-helpers.js';

const BASE = 'http://sessync.test';
const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };
const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;

let ctx: HostileContext;

/** Every object key and its etag in the bucket. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await bucket.list({ ...(cursor ? { cursor } : {}) });
    for (const o of page.objects) out.set(o.key, o.etag);
    if (!page.truncated) return out;
    cursor = page.cursor;
  }
}

beforeAll(async () => {
  ctx = await setUpHostile(worker, BASE, TEST_ADMIN_SECRET);
});

describe(`hostile input in workerd: ${HOSTILE_CASES.length} bad requests on R2`, () => {
  it.each(HOSTILE_CASES)('$name -> $status, clear message, nothing stored', async (c) => {
    const before = await snapshot();
    await expectHostileAnswer(c, await worker.fetch(await hostileRequest(c, ctx, BASE)));
    expect(await snapshot()).toEqual(before);
  });
});
