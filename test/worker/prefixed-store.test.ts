// PrefixedStore (`serve --store s3://bucket/prefix`): the BlobStore conformance suite through a prefix, and what it hides.
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { PrefixedStore } from '../../worker/store/prefixed-store.js';
import { describeBlobStore } from './blob-store.case.js';

const enc = new TextEncoder();

describeBlobStore('prefixed, on memory', async () => ({ store: new PrefixedStore(new MemoryStore(), 'team/sessync/') }));

describe('PrefixedStore', () => {
  it('writes every key under the prefix and sees nothing of the bucket outside it', async () => {
    const inner = new MemoryStore();
    const store = new PrefixedStore(inner, 'svc/');
    // Neighbours that sort before, after and inside the prefix's range without being under it.
    for (const k of ['a', 'svc', 'svc-other/x', 'svb/x', 'svd/x']) await inner.put(k, enc.encode('other'));
    expect(await store.putIfAbsent('sessions/s1', enc.encode('v'))).toBe(true);
    await store.put('tokens/t', enc.encode('t'));
    expect((await inner.list()).keys.filter((k) => k.startsWith('svc/'))).toEqual(['svc/sessions/s1', 'svc/tokens/t']);
    expect((await store.list()).keys).toEqual(['sessions/s1', 'tokens/t']);
    expect((await store.list({ prefix: 'tokens/' })).keys).toEqual(['tokens/t']);
    expect((await store.list({ startAfter: 'sessions/s1' })).keys).toEqual(['tokens/t']);
    expect(await store.get('a')).toBeNull();
    expect((await store.get('sessions/s1'))?.key).toBe('sessions/s1');
    await store.delete('sessions/s1');
    expect(await inner.get('svc/sessions/s1')).toBeNull();
    expect((await inner.get('a'))?.body).toEqual(enc.encode('other'));
  });
});
