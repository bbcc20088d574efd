// The one BlobStore conformance suite: the same body runs against memory, file system, S3 (radosgw) and R2 (workerd).
// No node:* imports here: this file also runs inside workerd.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../worker/store/blob-store.js';

export interface StoreUnderTest {
  store: BlobStore;
  cleanup?: () => Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const LIST_KEYS = 2500;
const RACERS = 24;
const SLOW = 180_000;
/** make() may start a server (radosgw: about 20 s, minutes on a loaded machine, one retry). */
const MAKE_TIMEOUT = 480_000;

/** Runs fn over items with at most n in flight. */
async function inPool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/** Follows the cursor to the end, checking every page's size on the way. */
async function listAll(store: BlobStore, opts: { prefix?: string; startAfter?: string; limit?: number }): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list(cursor === undefined ? opts : { ...opts, cursor });
    pages++;
    expect(page.keys.length).toBeLessThanOrEqual(Math.min(opts.limit ?? 1000, 1000));
    keys.push(...page.keys);
    cursor = page.cursor;
    if (pages > 100) throw new Error('list never ended: cursor keeps coming back');
  } while (cursor !== undefined);
  return { keys, pages };
}

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

/** Index of the first differing byte, -1 when equal (deep equality on a MiB of bytes takes seconds). */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** Byte order of UTF-8, which every backend promises; the keys here are ASCII, where it equals JS order. */
const sorted = (keys: string[]) => [...keys].sort();

/**
 * Registers the conformance suite for one backend. `make` is called once; every test works under its
 * own random prefix, so a shared bucket (R2's binding, a reused radosgw) is as good as a fresh one.
 */
export function describeBlobStore(name: string, make: () => Promise<StoreUnderTest>): void {
  describe(`BlobStore conformance [${name}]`, () => {
    let sut: StoreUnderTest | undefined;
    const store = (): BlobStore => {
      if (!sut) throw new Error(`${name}: make() did not provide a store`);
      return sut.store;
    };
    const fresh = () => `conf-${crypto.randomUUID()}/`;

    beforeAll(async () => {
      sut = await make();
    }, MAKE_TIMEOUT);
    afterAll(async () => {
      await sut?.cleanup?.();
    }, SLOW);

    it('get of a missing key answers null, also under a missing directory', async () => {
      const p = fresh();
      expect(await store().get(`${p}missing`)).toBeNull();
      expect(await store().get(`${p}no/such/dir/key`)).toBeNull();
    });

    it('putIfAbsent creates once, then answers false and leaves the first content', async () => {
      const p = fresh();
      expect(await store().putIfAbsent(`${p}k`, enc.encode('first'))).toBe(true);
      const a = await store().get(`${p}k`);
      expect(a && dec.decode(a.body)).toBe('first');
      expect(a?.key).toBe(`${p}k`);
      expect(typeof a?.etag).toBe('string');
      expect(a?.etag.length).toBeGreaterThan(0);
      expect(await store().putIfAbsent(`${p}k`, enc.encode('second'))).toBe(false);
      expect(await store().putIfAbsent(`${p}k`, enc.encode('first'))).toBe(false);
      const b = await store().get(`${p}k`);
      expect(b && dec.decode(b.body)).toBe('first');
      expect(b?.etag).toBe(a?.etag);
    });

    it(`${RACERS} racing putIfAbsent writers on one key leave exactly one winner, whose body is stored`, async () => {
      const p = fresh();
      const bodies = Array.from({ length: RACERS }, (_, i) => enc.encode(`writer ${i} ${crypto.randomUUID()}`));
      const results = await Promise.all(bodies.map((b) => store().putIfAbsent(`${p}race`, b)));
      const winners = results.flatMap((won, i) => (won ? [i] : []));
      expect(winners).toHaveLength(1);
      const got = await store().get(`${p}race`);
      expect(got && dec.decode(got.body)).toBe(dec.decode(bodies[winners[0]!]!));
    }, SLOW);

    it(`${RACERS} racing putIfAbsent writers of the empty body (a head) on one key leave exactly one winner`, async () => {
      const p = fresh();
      const results = await Promise.all(Array.from({ length: RACERS }, () => store().putIfAbsent(`${p}race`, new Uint8Array(0))));
      expect(results.filter((won) => won)).toHaveLength(1);
      expect((await store().get(`${p}race`))!.body.byteLength).toBe(0);
      expect(await store().putIfAbsent(`${p}race`, enc.encode('later'))).toBe(false);
      expect((await store().get(`${p}race`))!.body.byteLength).toBe(0);
    }, SLOW);

    it('writeMany, where a backend has it: each write answers as putIfAbsent or put would, and every one reads back whole', async (ctx) => {
      const s = store();
      if (!s.writeMany) return ctx.skip(); // object stores make each put durable alone: nothing to group
      const p = fresh();
      expect(await s.putIfAbsent(`${p}taken`, enc.encode('first'))).toBe(true);
      expect(await s.putIfAbsent(`${p}replaced`, enc.encode('old'))).toBe(true);
      expect(await s.putIfAbsent(`${p}held`, enc.encode('held'))).toBe(true);
      const big = randomBytes(300_000);
      const writes = [
        { key: `${p}new/a`, body: enc.encode('a') },
        { key: `${p}taken`, body: enc.encode('second') },
        { key: `${p}replaced`, body: enc.encode('new'), replace: true },
        { key: `${p}new/big`, body: big },
        { key: `${p}empty/new`, body: new Uint8Array(0) },
        { key: `${p}held`, body: [] },
        ...Array.from({ length: 150 }, (_, i) => ({ key: `${p}many/${String(i).padStart(3, '0')}`, body: enc.encode(`v${i}`) })),
      ];
      const created = await s.writeMany(writes);
      expect(created.slice(0, 6)).toEqual([true, false, true, true, true, false]);
      expect(created.slice(6).every((c) => c)).toBe(true);
      expect((await s.get(`${p}empty/new`))!.body.byteLength).toBe(0);
      expect(dec.decode((await s.get(`${p}held`))!.body)).toBe('held');
      expect(dec.decode((await s.get(`${p}taken`))!.body)).toBe('first');
      expect(dec.decode((await s.get(`${p}replaced`))!.body)).toBe('new');
      expect(firstDifference((await s.get(`${p}new/big`))!.body, big)).toBe(-1);
      expect((await listAll(s, { prefix: `${p}many/` })).keys).toHaveLength(150);
      expect(dec.decode((await s.get(`${p}many/149`))!.body)).toBe('v149');
    });

    it('put creates and overwrites (last writer wins) and changes the etag', async () => {
      const p = fresh();
      await store().put(`${p}k`, enc.encode('one'));
      const a = await store().get(`${p}k`);
      expect(a && dec.decode(a.body)).toBe('one');
      await store().put(`${p}k`, enc.encode('two, longer'));
      const b = await store().get(`${p}k`);
      expect(b && dec.decode(b.body)).toBe('two, longer');
      expect(b?.etag).not.toBe(a?.etag);
      expect(await store().putIfAbsent(`${p}k`, enc.encode('three'))).toBe(false);
      expect(dec.decode((await store().get(`${p}k`))!.body)).toBe('two, longer');
    });

    it('an etag tags the content that was read: asked for after an overwrite, an earlier read keeps its own', async () => {
      // A backend may compute it lazily (the file store hashes on first use); it must still be the tag of those bytes.
      const p = fresh();
      await store().put(`${p}k`, enc.encode('one'));
      const a = (await store().get(`${p}k`))!;
      await store().put(`${p}k`, enc.encode('two'));
      const b = (await store().get(`${p}k`))!;
      expect(a.etag).not.toBe(b.etag);
      expect(dec.decode(a.body)).toBe('one');
    });

    it(`lists ${LIST_KEYS} keys in pages of at most 1,000: sorted, no duplicate, no gap; prefix, startAfter and limit hold`, async () => {
      const p = fresh();
      const inside = Array.from({ length: LIST_KEYS }, (_, i) => `${p}list/g${i % 7}/${String(i).padStart(5, '0')}`);
      // Neighbours that share the string prefix but not the key prefix must stay out.
      const outside = [`${p}lis`, `${p}list`, `${p}lisu/x`, `${p}other/list/x`];
      await inPool([...inside, ...outside], 16, (k) => store().put(k, enc.encode(k)).then(() => undefined));
      const expected = sorted(inside);

      const all = await listAll(store(), { prefix: `${p}list/` });
      expect(all.pages).toBeGreaterThanOrEqual(3);
      expect(new Set(all.keys).size).toBe(all.keys.length);
      expect(all.keys).toEqual(expected);

      const small = await listAll(store(), { prefix: `${p}list/`, limit: 700 });
      expect(small.pages).toBeGreaterThanOrEqual(4);
      expect(small.keys).toEqual(expected);

      const after = expected[1234]!;
      const rest = await listAll(store(), { prefix: `${p}list/`, startAfter: after });
      expect(rest.keys).toEqual(expected.slice(1235));

      const g3 = await listAll(store(), { prefix: `${p}list/g3/` });
      expect(g3.keys).toEqual(expected.filter((k) => k.startsWith(`${p}list/g3/`)));

      const everything = await listAll(store(), { prefix: p });
      expect(everything.keys).toEqual(sorted([...inside, ...outside]));

      // Asking for more than 1,000 gets at most 1,000: every backend caps a page there.
      const capped = await store().list({ prefix: `${p}list/`, limit: 5000 });
      expect(capped.keys.length).toBeLessThanOrEqual(1000);
      expect(capped.keys).toEqual(expected.slice(0, capped.keys.length));
      expect(capped.cursor).toBeDefined();

      const one = await store().list({ prefix: `${p}list/`, limit: 1 });
      expect(one.keys).toEqual([expected[0]]);
      expect(one.cursor).toBeDefined();
    }, SLOW);

    it('lists in byte order across a key, its siblings and its own sub-keys', async () => {
      const p = fresh();
      // UTF-8 byte order: 'X' < 'x' < 'x-y' < 'x.y' < 'x/z' < 'x0'. A key and a "directory" of the same name coexist.
      const ks = ['x0', 'x/z', 'x.y', 'x', 'X', 'x-y', 'x/z/deeper'].map((k) => `${p}o/${k}`);
      for (const k of ks) expect(await store().putIfAbsent(k, enc.encode(k))).toBe(true);
      expect((await listAll(store(), { prefix: `${p}o/` })).keys).toEqual(sorted(ks));
      expect((await listAll(store(), { prefix: `${p}o/x` })).keys).toEqual(sorted(ks).filter((k) => k.startsWith(`${p}o/x`)));
      expect((await listAll(store(), { prefix: `${p}o/`, startAfter: `${p}o/x` })).keys).toEqual(sorted(ks).filter((k) => k > `${p}o/x`));
      for (const k of ks) expect(dec.decode((await store().get(k))!.body)).toBe(k);
    });

    it('a prefix that matches nothing lists an empty page without a cursor', async () => {
      const page = await store().list({ prefix: `${fresh()}nothing/` });
      expect(page.keys).toEqual([]);
      expect(page.cursor).toBeUndefined();
    });

    it('delete removes a key; deleting a missing key is not an error', async () => {
      const p = fresh();
      await store().delete(`${p}never-existed`);
      await store().delete(`${p}no/such/dir/key`);
      expect(await store().putIfAbsent(`${p}d/k`, enc.encode('x'))).toBe(true);
      await store().delete(`${p}d/k`);
      expect(await store().get(`${p}d/k`)).toBeNull();
      expect((await store().list({ prefix: p })).keys).toEqual([]);
      await store().delete(`${p}d/k`);
      expect(await store().putIfAbsent(`${p}d/k`, enc.encode('again'))).toBe(true);
      expect(dec.decode((await store().get(`${p}d/k`))!.body)).toBe('again');
    });

    it('binary bodies round-trip byte-exact: every byte value, 1 MiB of random bytes, and the empty body', async () => {
      const p = fresh();
      const every = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
      const big = randomBytes(1024 * 1024);
      const empty = new Uint8Array(0);
      expect(await store().putIfAbsent(`${p}every`, every)).toBe(true);
      await store().put(`${p}big`, big);
      expect(await store().putIfAbsent(`${p}empty`, empty)).toBe(true);
      const gotEvery = (await store().get(`${p}every`))!.body;
      expect(gotEvery).toBeInstanceOf(Uint8Array);
      expect(firstDifference(gotEvery, every)).toBe(-1);
      const gotBig = (await store().get(`${p}big`))!.body;
      expect(gotBig.length).toBe(big.length);
      expect(firstDifference(gotBig, big)).toBe(-1);
      const gotEmpty = (await store().get(`${p}empty`))!.body;
      expect(gotEmpty).toBeInstanceOf(Uint8Array);
      expect(gotEmpty.length).toBe(0);
    }, SLOW);

    it('a body given in parts is stored as their concatenation, by putIfAbsent, put and writeMany; the parts stay as given', async () => {
      const s = store();
      const p = fresh();
      const big = randomBytes(700_000);
      const parts = [enc.encode('head line\n'), new Uint8Array(0), big.subarray(1), enc.encode('tail')];
      const whole = new Uint8Array([...enc.encode('head line\n'), ...big.subarray(1), ...enc.encode('tail')]);
      const before = big.slice();
      expect(await s.putIfAbsent(`${p}parts`, parts)).toBe(true);
      expect(await s.putIfAbsent(`${p}parts`, [enc.encode('other')])).toBe(false);
      await s.put(`${p}put`, parts);
      await s.put(`${p}one`, [enc.encode('only part')]);
      await s.put(`${p}none`, []);
      if (s.writeMany) {
        expect(await s.writeMany([{ key: `${p}many/a`, body: parts }, { key: `${p}many/b`, body: [enc.encode('b1'), enc.encode('b2')], replace: true }])).toEqual([true, true]);
        expect(firstDifference((await s.get(`${p}many/a`))!.body, whole)).toBe(-1);
        expect(dec.decode((await s.get(`${p}many/b`))!.body)).toBe('b1b2');
      }
      expect(firstDifference((await s.get(`${p}parts`))!.body, whole)).toBe(-1);
      expect(firstDifference((await s.get(`${p}put`))!.body, whole)).toBe(-1);
      expect(dec.decode((await s.get(`${p}one`))!.body)).toBe('only part');
      expect((await s.get(`${p}none`))!.body.length).toBe(0);
      // A store keeps its own copy: changing a part afterwards changes nothing stored.
      parts[3]![0] = 0x21;
      expect(dec.decode((await s.get(`${p}parts`))!.body.subarray(-4))).toBe('tail');
      expect(firstDifference(big, before)).toBe(-1);
    }, SLOW);

    it('keys with nested slashes, mixed case and non-ASCII segments are distinct keys', async () => {
      const p = fresh();
      const ks = [`${p}a/b/c/d/e/f.json`, `${p}a/b/c/d/E/f.json`, `${p}a/B/c`, `${p}a/b/c`, `${p}a/é/日本/🙂`];
      for (const k of ks) expect(await store().putIfAbsent(k, enc.encode(`body of ${k}`))).toBe(true);
      for (const k of ks) expect(dec.decode((await store().get(k))!.body)).toBe(`body of ${k}`);
      expect((await listAll(store(), { prefix: `${p}a/b/` })).keys).toEqual(sorted(ks.filter((k) => k.startsWith(`${p}a/b/`))));
      expect((await listAll(store(), { prefix: `${p}a/` })).keys).toHaveLength(ks.length);
    });
  });
}
