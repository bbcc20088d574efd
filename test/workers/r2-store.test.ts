// The BlobStore conformance suite on R2, inside workerd, on the BUCKET binding from wrangler.toml.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { R2Store } from '../../worker/store/r2-store.js';
import { describeBlobStore } from '../worker/blob-store.case.js';

const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;

describeBlobStore('R2 in workerd', async () => ({ store: new R2Store(bucket) }));

describe('R2Store, R2 specifics', () => {
  it('the binding itself answers null to a put with If-None-Match: * on an existing key (the form R2Store relies on)', async () => {
    const key = `r2-onlyif-${crypto.randomUUID()}`;
    expect(await bucket.put(key, 'one', { onlyIf: new Headers({ 'If-None-Match': '*' }) })).not.toBeNull();
    expect(await bucket.put(key, 'two', { onlyIf: new Headers({ 'If-None-Match': '*' }) })).toBeNull();
    expect(await (await bucket.get(key))!.text()).toBe('one');
  });
});
