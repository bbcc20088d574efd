// The file store's layout on disk: what a fresh store makes per new session (folders counted, and the calls the real
// server makes, traced), stores an older version filled (kept as they are), the marker, and keys too long for one name.
import { spawn } from 'node:child_process';
import fsModule, { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { isSessyncError } from '../../shared/errors.js';
import { createApp } from '../../worker/app.js';
import { FsStore, encodeSegment } from '../../worker/store/fs-store.js';
import { compareKeys } from '../../worker/store/key-order.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { hasStrace } from '../sync/kill-rig.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor, storedKeys } from './routes-helpers.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const NEW_SESSIONS = 12;

/** Folders under `dir`, at any depth. */
function countDirs(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) n += 1 + countDirs(join(dir, e.name));
  return n;
}

async function pushNewSessions(client: TestClient, names: string[]): Promise<void> {
  const batches = await Promise.all(names.map((s) => makeBatch({ session: s, host: 'h1', seq: 1, count: 3, meta: metaFor(s) })));
  const r = await client.call('POST', '/v1/batches', { batches });
  expect(r.status, r.text).toBe(200);
  expect(r.json.results.map((x: { status: string }) => x.status)).toEqual(names.map(() => 'created'));
}

/** Writes `objects` as a version before the layout marker did: one folder per key segment, no marker. */
function writeNested(root: string, objects: Record<string, string>): void {
  for (const [key, body] of Object.entries(objects)) {
    const segs = key.split('/');
    const dir = join(root, ...segs.slice(0, -1).map(encodeSegment));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, encodeSegment(segs[segs.length - 1]!) + '~'), body);
  }
}

async function listPaged(store: FsStore, opts: { prefix?: string; startAfter?: string; limit?: number }): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(cursor === undefined ? opts : { ...opts, cursor });
    out.push(...page.keys);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return out;
}

describe('file store layout', () => {
  const t = tempDir('sessync-fs-layout-');
  afterAll(() => t.cleanup());

  it(`a push of ${NEW_SESSIONS} new sessions to a fresh store makes two folders per session: its objects' and its heads'`, async () => {
    const root = join(t.dir, 'fresh');
    const store = new FsStore(root);
    await store.open();
    expect(JSON.parse(readFileSync(join(root, '.layout'), 'utf8'))).toEqual({ layout: 'flat', dirLevels: 4 });
    const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
    const { account, token } = await adminCreateAccount(f, TEST_ADMIN_SECRET);
    const client = new TestClient(f, token);
    await pushNewSessions(client, ['warm-up']); // the account's own folders
    const before = countDirs(root);
    const names = Array.from({ length: NEW_SESSIONS }, (_, i) => `new-${i}`);
    await pushNewSessions(client, names);
    expect(countDirs(root) - before).toBe(2 * NEW_SESSIONS);
    // The batch and the meta are files of the session's folder; the head, of the session's heads folder.
    const acct = join(root, 'a', encodeSegment(account));
    expect(readdirSync(join(acct, 's', 'new-0')).sort()).toEqual(['b%2fh1%2f000000000001~', 'meta~']);
    expect(readdirSync(join(acct, 'heads', 'new-0'))).toEqual(['h1%2f000000000001~']);
    // Read back through the app like a client: the changes feed lists every head, a pull finds the batch.
    const changes = await client.call('GET', '/v1/changes');
    expect(changes.json.heads.map((h: { session: string }) => h.session).sort()).toEqual(['warm-up', ...names].sort());
    expect((await client.pullAll('new-3')).batches).toHaveLength(1);
  });

  it.skipIf(!hasStrace())('the real server\'s calls for new sessions (strace): two mkdirs and five fsyncs each, every folder fsynced once, none failing, no link failing first', async () => {
    const root = join(t.dir, 'traced');
    const script = join(t.dir, 'push-new.mjs');
    // The real app over the real store in a plain node process, one request of new sessions between two markers.
    await build({
      stdin: {
        contents: `
          import { writeSync } from 'node:fs';
          import { createApp } from ${JSON.stringify(join(REPO_ROOT, 'worker/app.ts'))};
          import { FsStore } from ${JSON.stringify(join(REPO_ROOT, 'worker/store/fs-store.ts'))};
          import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from ${JSON.stringify(join(REPO_ROOT, 'test/worker/routes-helpers.ts'))};
          const store = new FsStore(process.argv[2]);
          await store.open();
          const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
          const client = new TestClient(f, (await adminCreateAccount(f, TEST_ADMIN_SECRET)).token);
          const push = async (names) => {
            const batches = await Promise.all(names.map((s) => makeBatch({ session: s, host: 'h1', seq: 1, count: 3, meta: metaFor(s) })));
            return client.call('POST', '/v1/batches', { batches });
          };
          await push(['warm-up']);
          const names = Array.from({ length: ${NEW_SESSIONS} }, (_, i) => 'new-' + i);
          writeSync(1, 'measure start\\n');
          const r = await push(names);
          writeSync(1, 'measure end\\n');
          writeSync(1, JSON.stringify(r.json.results.map((x) => x.status)) + '\\n');`,
        resolveDir: REPO_ROOT,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: script,
      logLevel: 'silent',
    });
    const trace = join(t.dir, 'push-new.strace');
    const child = spawn('strace', ['-f', '-qq', '-y', '-e', 'trace=mkdir,mkdirat,link,linkat,fsync,fdatasync,write', '-o', trace, process.execPath, script, root], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual(Array.from({ length: NEW_SESSIONS }, () => 'created'));

    // Calls between the markers, by name; a call strace shows in two parts (another thread's call between) counts once.
    const calls = new Map<string, { n: number; failed: number }>();
    /** fsyncs by the path strace names for the fd (-y), so a folder synced twice in one request shows. */
    const synced = new Map<string, number>();
    let inside = false;
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      if (line.includes('"measure start\\n"')) inside = true;
      else if (line.includes('"measure end\\n"')) inside = false;
      const m = /^\d+ +(?:<\.\.\. )?(\w+)(\(| resumed>)/.exec(line);
      if (!inside || !m || m[1] === 'write') continue;
      const name = m[1]!.replace(/at$/, '');
      const c = calls.get(name) ?? { n: 0, failed: 0 };
      if (m[2] === '(') c.n++;
      if (/= -1 E/.test(line)) c.failed++;
      calls.set(name, c);
      const path = /^\d+ +(?:fsync|fdatasync)\(\d+<([^>]*)>/.exec(line)?.[1];
      if (path && !path.includes('/.tmp/')) synced.set(path, (synced.get(path) ?? 0) + 1);
    }
    const count = (name: string) => calls.get(name) ?? { n: 0, failed: 0 };
    // Each session: its objects' folder and its heads' folder, made at once (the account's folders are known).
    expect(count('mkdir')).toEqual({ n: 2 * NEW_SESSIONS, failed: 0 });
    // Batch and meta linked into place, none first failing for a missing folder; the head, empty, is created at its
    // own name (no temp file to link).
    expect(count('link')).toEqual({ n: 2 * NEW_SESSIONS, failed: 0 });
    // Three files and two folders each (the batch and the meta share one round, so their folder is synced once; the
    // heads' folder), and the parents that got new folders, in each of the two rounds.
    expect(count('fsync').n + count('fdatasync').n).toBeLessThanOrEqual(5 * NEW_SESSIONS + 4);
    // Group commit: each folder the request touched is fsynced once (its session's, its heads', and their parents).
    const folders = [...synced].filter(([p]) => !p.endsWith('~'));
    expect(folders.length).toBeGreaterThanOrEqual(2 * NEW_SESSIONS);
    expect(folders.filter(([, n]) => n > 1)).toEqual([]);
  }, 120_000);

  it('a store an older version filled (one folder per key segment, no marker) is read, listed and written in its own layout', async () => {
    const root = join(t.dir, 'nested');
    const objects: Record<string, string> = {
      'a/acct-1/s/sess-1/b/h1/000000000001': 'batch 1',
      'a/acct-1/s/sess-1/b/h1/000000000002': 'batch 2',
      'a/acct-1/s/sess-1/meta': 'meta',
      'a/acct-1/heads/sess-1/h1/000000000002': 'head',
      'tokens/abc': 'token',
    };
    writeNested(root, objects);
    const reader = new FsStore(root);
    for (const [k, v] of Object.entries(objects)) expect(dec.decode((await reader.get(k))!.body)).toBe(v);
    expect(await storedKeys(reader)).toEqual(Object.keys(objects).sort(compareKeys));
    expect(await storedKeys(reader, 'a/acct-1/s/sess-1/b/h1/')).toEqual(['a/acct-1/s/sess-1/b/h1/000000000001', 'a/acct-1/s/sess-1/b/h1/000000000002']);

    const writer = new FsStore(root);
    expect(await writer.putIfAbsent('a/acct-1/s/sess-1/b/h1/000000000003', enc.encode('batch 3'))).toBe(true);
    expect(await writer.putIfAbsent('a/acct-1/heads/sess-2/h1/000000000001', enc.encode('head 2'))).toBe(true);
    expect(existsSync(join(root, 'a', 'acct-1', 's', 'sess-1', 'b', 'h1', '000000000003~'))).toBe(true);
    expect(existsSync(join(root, 'a', 'acct-1', 'heads', 'sess-2', 'h1', '000000000001~'))).toBe(true);
    expect(JSON.parse(readFileSync(join(root, '.layout'), 'utf8'))).toEqual({ layout: 'nested' });
    // A store opened later reads the marker: the same layout, even were every object deleted.
    const later = new FsStore(root);
    await later.open();
    expect(dec.decode((await later.get('a/acct-1/s/sess-1/b/h1/000000000003'))!.body)).toBe('batch 3');
    expect(await storedKeys(later, 'a/acct-1/heads/')).toEqual(['a/acct-1/heads/sess-1/h1/000000000002', 'a/acct-1/heads/sess-2/h1/000000000001']);
  });

  it('a reader of a fresh store opened before anything is written finds what a writer stores afterwards', async () => {
    const root = join(t.dir, 'reader-first');
    const reader = new FsStore(root);
    expect(await reader.get('a/x/s/y/b/h/000000000001')).toBeNull();
    expect((await reader.list({ prefix: 'a/' })).keys).toEqual([]);
    const writer = new FsStore(root);
    expect(await writer.putIfAbsent('a/x/s/y/b/h/000000000001', enc.encode('batch'))).toBe(true);
    expect(dec.decode((await reader.get('a/x/s/y/b/h/000000000001'))!.body)).toBe('batch');
    expect((await reader.list({ prefix: 'a/x/s/y/' })).keys).toEqual(['a/x/s/y/b/h/000000000001']);
  });

  it('a reader that looks while another process opens the fresh store and writes its first object settles on that layout', async () => {
    // The writer's marker and first object appear between the reader's two looks (at the root's names, at the marker),
    // whichever it takes first: staged in another root by a real store, then moved in by rename at that moment.
    const t1 = tempDir('fs-layout-race-');
    const t2 = tempDir('fs-layout-staged-');
    const root = join(t1.dir, 'store');
    const staged = join(t2.dir, 'store');
    const key = 'a/acct/s/sess/b/host/000000000001';
    await new FsStore(staged).put(key, enc.encode('first'));
    mkdirSync(root, { recursive: true });
    const reader = new FsStore(root);
    const origReaddir = fsModule.readdirSync;
    const origRead = fsModule.readFileSync;
    let moved = false;
    const moveIn = () => {
      if (moved) return;
      moved = true;
      renameSync(join(staged, '.layout'), join(root, '.layout'));
      renameSync(join(staged, 'a'), join(root, 'a'));
    };
    fsModule.readdirSync = ((...args: Parameters<typeof readdirSync>) => {
      const out = origReaddir(...args);
      if (String(args[0]) === root) moveIn();
      return out;
    }) as typeof readdirSync;
    fsModule.readFileSync = ((...args: Parameters<typeof readFileSync>) => {
      try {
        return origRead(...args);
      } finally {
        if (String(args[0]) === join(root, '.layout')) moveIn();
      }
    }) as typeof readFileSync;
    syncBuiltinESMExports();
    let got: Awaited<ReturnType<FsStore['get']>>;
    try {
      got = await reader.get(key);
    } finally {
      fsModule.readdirSync = origReaddir;
      fsModule.readFileSync = origRead;
      syncBuiltinESMExports();
    }
    expect(moved).toBe(true);
    expect(got && dec.decode(got.body)).toBe('first');
    expect((await reader.list({ prefix: 'a/' })).keys).toEqual([key]);
    t1.cleanup();
    t2.cleanup();
  });

  it('a fresh store in a mount point\'s root (lost+found there) takes the current layout', async () => {
    const t = tempDir('fs-layout-mount-');
    const root = join(t.dir, 'store');
    mkdirSync(join(root, 'lost+found'), { recursive: true });
    const store = new FsStore(root);
    await store.open();
    await store.put('a/acct/s/sess/b/host/000000000001', enc.encode('x'));
    expect(JSON.parse(readFileSync(join(root, '.layout'), 'utf8'))).toMatchObject({ layout: 'flat' });
    t.cleanup();
  });

  it('a marker this version does not know refuses every call with an error that says so, and nothing is written', async () => {
    const root = join(t.dir, 'unknown');
    mkdirSync(root);
    writeFileSync(join(root, '.layout'), '{"layout":"spiral","turns":3}\n');
    const store = new FsStore(root);
    for (const op of [() => store.open(), () => store.get('k'), () => store.list(), () => store.putIfAbsent('k', enc.encode('v')), () => store.put('k', enc.encode('v')), () => store.writeMany([{ key: 'k', body: enc.encode('v') }]), () => store.delete('k')]) {
      const e = await op().then(() => null, (err: unknown) => err);
      expect(isSessyncError(e, 'unavailable') && !e.retryable, String(e)).toBe(true);
      expect((e as Error).message).toContain('layout this version of sessync does not know');
    }
    expect(readdirSync(root)).toEqual(['.layout']);
  });

  it('a folder this store knows, pruned by another store\'s delete, is made again by the next write into it', async () => {
    const root = join(t.dir, 'pruned');
    const [a, b] = [new FsStore(root), new FsStore(root)]; // two stores: two processes' memories of which folders exist
    const key = (n: number) => `a/acct/s/sess/b/h1/00000000000${n}`;
    expect(await a.putIfAbsent(key(1), enc.encode('one'))).toBe(true); // a now knows the session's folder
    await b.delete(key(1)); // its last file: b prunes the folder, up to the root
    expect(existsSync(join(root, 'a'))).toBe(false);
    expect(await a.putIfAbsent(key(2), enc.encode('two'))).toBe(true);
    expect(await a.writeMany([{ key: key(3), body: enc.encode('three') }, { key: 'a/acct/heads/sess/h1/000000000003', body: enc.encode('head') }])).toEqual([true, true]);
    await b.delete(key(2));
    await b.delete(key(3));
    await a.put(key(4), enc.encode('four'));
    expect(await storedKeys(b, 'a/')).toEqual(['a/acct/heads/sess/h1/000000000003', key(4)]);
    expect(dec.decode((await b.get(key(4)))!.body)).toBe('four');
  });

  describe('keys whose end does not fit one file name below the layout\'s levels', () => {
    const root = join(t.dir, 'long');
    const p = 'x/y/z/w/';
    const L = 'L'.repeat(120); // 151 bytes as a name (lowercased, plus its case mask)
    const keys = [
      `${p}${L}`, // the file `l…@…~` in w/
      `${p}${L}/${'M'.repeat(120)}`, // too long beside L: in the folder w/l…@…/
      `${p}${L}/${'Z'.repeat(100)}`, // the same
      `${p}${L}/Zb`, // fits: the file `l…%2fzb@…~` in w/, beside that folder, and listed inside its range
      `${p}${L}/a`,
      `${p}${L}0`, // after every key of L/ ('/' < '0')
      `${p}k`,
    ];
    const sorted = [...keys].sort(compareKeys);
    const store = new FsStore(root);

    it('take one folder more, and every key is stored and read back whole', async () => {
      expect(await store.writeMany(keys.map((k) => ({ key: k, body: enc.encode(k) })))).toEqual(keys.map(() => true));
      for (const k of keys) expect(dec.decode((await store.get(k))!.body)).toBe(k);
      const w = join(root, 'x', 'y', 'z', 'w');
      const folder = readdirSync(w).find((n) => statSync(join(w, n)).isDirectory())!;
      expect(folder).toBe(encodeSegment(L));
      expect(readdirSync(join(w, folder)).sort()).toEqual([encodeSegment('M'.repeat(120)) + '~', encodeSegment('Z'.repeat(100)) + '~']);
      expect(readdirSync(w)).toContain(encodeSegment(`${L}/Zb`) + '~');
    });

    it('are listed in key order, in pages of one, from any startAfter and under any prefix', async () => {
      expect(await listPaged(store, { prefix: p })).toEqual(sorted);
      expect(await listPaged(store, { prefix: p, limit: 1 })).toEqual(sorted);
      for (const [i, after] of sorted.entries()) expect(await listPaged(store, { prefix: p, startAfter: after, limit: 2 }), after).toEqual(sorted.slice(i + 1));
      for (const prefix of [`${p}${L}`, `${p}${L}/`, `${p}${L}/Z`, `${p}${L}/Zb`, `${p}${L}0`, 'x/y/']) {
        expect(await listPaged(store, { prefix }), prefix).toEqual(sorted.filter((k) => k.startsWith(prefix)));
      }
    });

    it('are deleted like any key, the folder going with its last file', async () => {
      await store.delete(`${p}${L}/${'M'.repeat(120)}`);
      await store.delete(`${p}${L}/${'Z'.repeat(100)}`);
      expect(readdirSync(join(root, 'x', 'y', 'z', 'w')).some((n) => !n.endsWith('~'))).toBe(false);
      expect(await listPaged(store, { prefix: p })).toEqual(sorted.filter((k) => !k.endsWith('M') && !k.endsWith('ZZ')));
      expect(await store.putIfAbsent(`${p}${L}/${'M'.repeat(120)}`, enc.encode('again'))).toBe(true);
      expect(dec.decode((await store.get(`${p}${L}/${'M'.repeat(120)}`))!.body)).toBe('again');
    });
  });
});
