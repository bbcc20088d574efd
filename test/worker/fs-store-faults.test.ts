// The file store's group write under injected system-call faults: a temp open failing, a folder pruned or left by
// someone else, a folder that cannot be made, an fsync failing while others are in flight. The real store on a real
// folder; only the named calls of node:fs are wrapped (each passes through to the real call unless a hook says otherwise).
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { isSessyncError } from '../../shared/errors.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { tempDir } from '../helpers/cli.js';

type Errno = NodeJS.ErrnoException;

const io = vi.hoisted(() => ({
  /**
   * What happened, in order: `open <path>`, `fsync-start <fd>`, `fsync-end <fd>`, `synced <path>` (an fsync that
   * succeeded, named by the path its fd had then: fd numbers are reused once closed), `close <fd>`.
   */
  log: [] as string[],
  /** Path of each fd the store opened (temp files and folders). */
  paths: new Map<number, string>(),
  hooks: {} as {
    openSync?: (path: string) => Errno | undefined;
    mkdirSync?: (path: string) => Errno | undefined;
    beforeLink?: (to: string) => void;
    /** 'fail' fails it at once; 'late' runs it, then holds its result back a few event-loop turns. */
    fsync?: (path: string) => 'fail' | 'late' | undefined;
    /** An fsync held back until the promise settles. */
    gate?: (path: string) => Promise<void> | undefined;
  },
}));

function fault(code: string): Errno {
  return Object.assign(new Error(`${code}: injected`), { code });
}

/** A few turns of the event loop: what the store does on a settled promise runs before this ends. */
function turns(n: number, then: () => void): void {
  if (n === 0) then();
  else setImmediate(() => turns(n - 1, then));
}

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const fsync = (fd: number, cb: (e: Errno | null) => void) => {
    io.log.push(`fsync-start ${fd}`);
    const path = io.paths.get(fd) ?? '';
    const how = io.hooks.fsync?.(path);
    const done = (e: Errno | null) => {
      io.log.push(`fsync-end ${fd}`);
      if (!e) io.log.push(`synced ${path}`);
      cb(e);
    };
    const gate = io.hooks.gate?.(path);
    if (gate) return void gate.then(() => real.fsync(fd, done));
    if (how === 'fail') return setImmediate(() => done(fault('EIO')));
    real.fsync(fd, (e) => (how === 'late' ? turns(5, () => done(e)) : done(e)));
  };
  const closeSync = (fd: number) => {
    io.log.push(`close ${fd}`);
    real.closeSync(fd);
  };
  const openSync = ((path: string, ...rest: never[]) => {
    const injected = io.hooks.openSync?.(String(path));
    if (injected) throw injected;
    const fd = (real.openSync as (...a: unknown[]) => number)(path, ...rest);
    io.paths.set(fd, String(path));
    io.log.push(`open ${path}`);
    return fd;
  }) as typeof real.openSync;
  const mkdirSync = ((path: string, opts: never) => {
    const injected = io.hooks.mkdirSync?.(String(path));
    if (injected) throw injected;
    return real.mkdirSync(path, opts);
  }) as typeof real.mkdirSync;
  const linkSync = (from: string, to: string) => {
    io.hooks.beforeLink?.(to);
    real.linkSync(from, to);
  };
  const fs = { ...real, fsync, closeSync, openSync, mkdirSync, linkSync };
  return { ...fs, default: fs };
});

const enc = new TextEncoder();
const dec = new TextDecoder();
const t = tempDir('sessync-fs-faults-');
afterAll(() => t.cleanup());
afterEach(() => {
  io.hooks = {};
  io.log.length = 0;
  io.paths.clear();
});

let stores = 0;
async function freshStore(): Promise<{ store: FsStore; root: string }> {
  const root = join(t.dir, `s${stores++}`);
  const store = new FsStore(root);
  await store.open();
  io.log.length = 0;
  return { store, root };
}

/** Keys of three new sessions of a new account: their folders (and the account's) do not exist yet. */
const KEYS = ['a/acct/s/one/b/host/000000000001', 'a/acct/s/two/b/host/000000000001', 'a/acct/s/three/b/host/000000000001'];
const writesOf = (keys: readonly string[]) => keys.map((key) => ({ key, body: enc.encode(`body of ${key}`) }));

/** Folders under root (but .tmp), deepest first. */
function foldersUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name !== '.tmp' && statSync(p).isDirectory()) out.push(...foldersUnder(p), p);
  }
  return out;
}

/** The paths (folders and temp files) fsynced successfully so far, each named when its fsync ended. */
function fsyncedPaths(): Set<string> {
  return new Set(io.log.filter((l) => l.startsWith('synced ')).map((l) => l.slice('synced '.length)));
}

/** The folder holding each key's name was fsynced: a crash cannot lose the name. */
function expectNamesDurable(store: FsStore, keys: readonly string[]): void {
  const synced = fsyncedPaths();
  for (const key of keys) expect(synced.has(dirname(store.pathOf(key))), `the folder holding ${key} was never fsynced`).toBe(true);
}

/** Resolves once `cond` holds, checked each turn of the event loop. */
function until(cond: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (cond() ? resolve() : setImmediate(check));
    check();
  });
}

const isFolder = (path: string) => path !== '' && !path.includes('/.tmp/');

/** Every folder's own entry made durable: the folder holding it was fsynced (a crash cannot lose the folder). */
function expectEveryFolderDurable(root: string): void {
  const synced = fsyncedPaths();
  for (const f of foldersUnder(root)) expect(synced.has(dirname(f)), `the entry of ${f} in ${dirname(f)} was never fsynced`).toBe(true);
}

/** The group of KEYS written: each created, read back whole, every name and every new folder's entry fsynced. */
async function expectGroupStored(store: FsStore, root: string): Promise<void> {
  expect(await store.writeMany(writesOf(KEYS))).toEqual([true, true, true]);
  for (const key of KEYS) expect(dec.decode((await store.get(key))!.body)).toBe(`body of ${key}`);
  expectNamesDurable(store, KEYS);
  expectEveryFolderDurable(root);
}

describe('FsStore group write, injected faults', () => {
  it('a temp open failing fails the group: its error names the key, nothing is named, no fd left open', async () => {
    const { store, root } = await freshStore();
    let temps = 0;
    io.hooks.openSync = (path) => (path.includes('/.tmp/') && ++temps === 2 ? fault('ENOSPC') : undefined);
    const e = await store.writeMany(writesOf(KEYS)).then(() => null, (err: unknown) => err);
    expect(temps).toBe(3);
    expect(isSessyncError(e, 'unavailable') && e.retryable).toBe(false); // ENOSPC needs an operator
    expect((e as Error).message).toContain(KEYS[1]);
    expect((await store.list()).keys).toEqual([]);
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
    expect(io.log.filter((l) => l.startsWith('open ')).length).toBe(2);
    for (const [fd] of io.paths) expect(io.log, `fd ${fd} never closed`).toContain(`close ${fd}`);
  });

  it('an fsync failing while the others are in flight: each fd is closed only after its own fsync settled', async () => {
    const { store, root } = await freshStore();
    let temps = 0;
    io.hooks.fsync = (path) => (path.includes('/.tmp/') ? (++temps === 1 ? 'fail' : 'late') : undefined);
    const e = await store.writeMany(writesOf(KEYS)).then(() => null, (err: unknown) => err);
    expect(temps).toBe(3);
    expect(isSessyncError(e, 'unavailable') && e.retryable).toBe(true);
    expect((e as Error).message).toContain(KEYS[0]);
    const temp = [...io.paths].filter(([, p]) => p.includes('/.tmp/')).map(([fd]) => fd);
    expect(temp).toHaveLength(3);
    for (const fd of temp) {
      const end = io.log.indexOf(`fsync-end ${fd}`);
      expect(end, `fsync of fd ${fd} never settled`).toBeGreaterThanOrEqual(0);
      expect(io.log.indexOf(`close ${fd}`), `fd ${fd} closed while its fsync was in flight`).toBeGreaterThan(end);
    }
    expect((await store.list()).keys).toEqual([]);
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
  });

  it('new folders: every one\'s entry is fsynced in its parent, up to the root', async () => {
    const { store, root } = await freshStore();
    await expectGroupStored(store, root);
  });

  it('folders left by someone else (a failed group, another process: nothing this process fsynced) are made durable up to the root', async () => {
    const { store, root } = await freshStore();
    for (const key of KEYS) mkdirSync(dirname(store.pathOf(key)), { recursive: true });
    await expectGroupStored(store, root);
  });

  it('a folder pruned between its mkdir and the link is made again (the bounded ENOENT retry)', async () => {
    const { store, root } = await freshStore();
    let pruned = 0;
    io.hooks.beforeLink = (to) => {
      if (to.includes('/two') && pruned === 0 && existsSync(dirname(to))) {
        rmdirSync(dirname(to));
        pruned++;
      }
    };
    await expectGroupStored(store, root);
    expect(pruned).toBe(1);
  });

  it('a folder that cannot be made: the error names the key, not a file system without hard links', async () => {
    const { store } = await freshStore();
    io.hooks.mkdirSync = () => fault('EPERM');
    const e = await store.putIfAbsent(KEYS[0]!, enc.encode('x')).then(() => null, (err: unknown) => err);
    expect(isSessyncError(e, 'unavailable') && e.retryable).toBe(false);
    expect((e as Error).message).toContain(KEYS[0]);
    expect((e as Error).message).not.toContain('hard links');
    const group = await store.writeMany(writesOf(KEYS)).then(() => null, (err: unknown) => err);
    expect((group as Error).message).toContain(KEYS[0]);
    expect((await store.list()).keys).toEqual([]);
  });
});

describe('FsStore folder durability: names and folders this process did not see made durable', () => {
  it('a partial tree left by a process killed mid-chain (mkdir -p): a folder made under it walks up too', async () => {
    const { store, root } = await freshStore();
    mkdirSync(join(root, 'a', 'acct'), { recursive: true }); // killed after a/acct, before a/acct/s: nobody fsynced root or a
    await expectGroupStored(store, root);
  });

  it('two groups of one new account at once: the second is reported stored only with every entry it uses durable', async () => {
    const { store, root } = await freshStore();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    io.hooks.gate = (path) => (holding && isFolder(path) ? held : undefined);
    const first = store.writeMany(writesOf([KEYS[0]!])); // makes a, acct, s, one
    // The first group is in its names round (a folder fsync started and held): its folders are made, not yet known.
    await until(() => io.log.some((l) => l.startsWith('fsync-start ') && isFolder(io.paths.get(Number(l.slice(12))) ?? '')));
    holding = false;
    expect(await store.writeMany(writesOf([KEYS[1]!]))).toEqual([true]); // another request of the same account
    const synced = fsyncedPaths();
    release();
    await first;
    const holder = dirname(store.pathOf(KEYS[1]!));
    const missing = [holder];
    for (let f = holder; f !== root; f = dirname(f)) missing.push(dirname(f));
    expect(missing.filter((d) => !synced.has(d)), 'not yet fsynced when the second group was reported stored').toEqual([]);
  });

  it('past MAX_KNOWN_DIRS the store forgets its folders, not its root: the walk up never leaves the store', async () => {
    const { store, root } = await freshStore();
    expect(await store.writeMany(writesOf([KEYS[1]!]))).toEqual([true]); // a/acct/s/two made and known
    const known = (store as unknown as { known: Set<string> }).known;
    for (let i = 0; known.size < 100_000; i++) known.add(`/nonexistent/${i}`);
    expect(await store.writeMany(writesOf([KEYS[0]!]))).toEqual([true]); // its names round clears `known`
    // On macOS and FreeBSD mkdir("/") fails EISDIR, on Windows a drive root EPERM: a walk reaching it failed every write.
    io.hooks.mkdirSync = (path) => (path === '/' ? fault('EISDIR') : undefined);
    io.log.length = 0;
    const other = 'a/acct/s/two/b/host/000000000002'; // into a folder made and known before the clear
    for (let i = 0; i < 2; i++) expect(await store.writeMany(writesOf([other]))).toEqual([i === 0]);
    const outside = [...fsyncedPaths()].filter((p) => !(p === root || p.startsWith(root + '/')));
    expect(outside, 'fsynced outside the store').toEqual([]);
  });

  it('a retry after a failed names round answers "exists", and makes those names durable before saying so', async () => {
    const { store } = await freshStore();
    io.hooks.fsync = (path) => (isFolder(path) ? 'fail' : undefined);
    const first = await store.writeMany(writesOf(KEYS)).then(() => null, (err: unknown) => err);
    expect(isSessyncError(first, 'unavailable')).toBe(true);
    expect(KEYS.filter((k) => existsSync(store.pathOf(k)))).toEqual(KEYS); // linked, their folders not durable
    io.hooks = {};
    io.log.length = 0;
    expect(await store.writeMany(writesOf(KEYS))).toEqual([false, false, false]); // what a client's retry of the push does
    expectNamesDurable(store, KEYS);
    io.log.length = 0;
    expect(await store.putIfAbsent(KEYS[0]!, enc.encode('again'))).toBe(false); // the single write answers the same
    expectNamesDurable(store, [KEYS[0]!]);
  });

  it('a group refused at the place step makes the names it did place durable before it fails', async () => {
    const { store } = await freshStore();
    io.hooks.mkdirSync = (path) => (path.endsWith('/two') ? fault('EPERM') : undefined);
    const e = await store.writeMany(writesOf(KEYS)).then(() => null, (err: unknown) => err);
    expect(isSessyncError(e, 'unavailable')).toBe(true);
    expect((e as Error).message).toContain(KEYS[1]);
    const named = [KEYS[0]!, KEYS[2]!];
    expect(named.filter((k) => existsSync(store.pathOf(k)))).toEqual(named); // a retry answers "exists" for these
    expectNamesDurable(store, named);
  });

  it('the test\'s own record: an fsynced folder stays recorded when later reads reuse its fd number', async () => {
    const { store } = await freshStore();
    expect(await store.writeMany(writesOf(KEYS))).toEqual([true, true, true]);
    const before = fsyncedPaths();
    for (const key of KEYS) await store.get(key);
    expect([...before].filter((p) => !fsyncedPaths().has(p))).toEqual([]);
    expectNamesDurable(store, KEYS);
  });
});

describe('FsStore empty put-if-absent (a head): created at its own name, no temp file', () => {
  const HEADS = ['a/acct/heads/one/host/000000000001', 'a/acct/heads/two/host/000000000001'];
  const empties = (keys: readonly string[]) => keys.map((key) => ({ key, body: new Uint8Array(0) }));

  it('opens no temp file; each file and the folder holding it are fsynced before it is reported stored', async () => {
    const { store, root } = await freshStore();
    expect(await store.writeMany([...empties(HEADS), ...writesOf([KEYS[0]!])])).toEqual([true, true, true]);
    expect(await store.putIfAbsent('a/acct/heads/three/host/000000000001', [])).toBe(true); // the single write too
    const heads = [...HEADS, 'a/acct/heads/three/host/000000000001'];
    const temps = io.log.filter((l) => l.startsWith('open ') && l.includes('/.tmp/'));
    expect(temps).toHaveLength(1); // the batch's only
    const synced = fsyncedPaths();
    for (const key of heads) {
      expect(synced.has(store.pathOf(key)), `${key} itself was never fsynced`).toBe(true);
      expect((await store.get(key))!.body.byteLength).toBe(0);
    }
    expectNamesDurable(store, heads);
    expectEveryFolderDurable(root);
    for (const [fd] of io.paths) expect(io.log, `fd ${fd} never closed`).toContain(`close ${fd}`);
  });

  it('an fsync of one failing fails the group; the retry answers "exists" only once that file is fsynced', async () => {
    const { store } = await freshStore();
    io.hooks.fsync = (path) => (path.endsWith('000000000001~') && path.includes('/two/') ? 'fail' : undefined);
    const e = await store.writeMany(empties(HEADS)).then(() => null, (err: unknown) => err);
    expect(isSessyncError(e, 'unavailable') && e.retryable).toBe(true);
    expect((e as Error).message).toContain(HEADS[1]);
    expect(HEADS.filter((k) => existsSync(store.pathOf(k)))).toEqual(HEADS); // whole (empty), its inode not durable
    for (const [fd] of io.paths) expect(io.log, `fd ${fd} still open when the failure was reported`).toContain(`close ${fd}`);
    io.hooks = {};
    io.paths.clear();
    io.log.length = 0;
    expect(await store.writeMany(empties(HEADS))).toEqual([false, false]);
    for (const key of HEADS) expect(fsyncedPaths().has(store.pathOf(key)), `${key} reported stored, never fsynced`).toBe(true);
    expectNamesDurable(store, HEADS);
    for (const [fd] of io.paths) expect(io.log, `fd ${fd} never closed`).toContain(`close ${fd}`);
  });
});
