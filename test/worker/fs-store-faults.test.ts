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
  /** What happened, in order: `open <path>`, `fsync-start <fd>`, `fsync-end <fd>`, `close <fd>`. */
  log: [] as string[],
  /** Path of each fd the store opened (temp files and folders). */
  paths: new Map<number, string>(),
  hooks: {} as {
    openSync?: (path: string) => Errno | undefined;
    mkdirSync?: (path: string) => Errno | undefined;
    beforeLink?: (to: string) => void;
    /** 'fail' fails it at once; 'late' runs it, then holds its result back a few event-loop turns. */
    fsync?: (path: string) => 'fail' | 'late' | undefined;
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
    const how = io.hooks.fsync?.(io.paths.get(fd) ?? '');
    const done = (e: Errno | null) => {
      io.log.push(`fsync-end ${fd}`);
      cb(e);
    };
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

/** The folders the store fsynced (opened by path, then fsynced). */
function fsyncedPaths(): Set<string> {
  const out = new Set<string>();
  for (const line of io.log) {
    const [what, arg] = line.split(' ') as [string, string];
    if (what === 'fsync-start') out.add(io.paths.get(Number(arg)) ?? `fd ${arg}`);
  }
  return out;
}

/** Every folder's own entry made durable: the folder holding it was fsynced (a crash cannot lose the folder). */
function expectEveryFolderDurable(root: string): void {
  const synced = fsyncedPaths();
  for (const f of foldersUnder(root)) expect(synced.has(dirname(f)), `the entry of ${f} in ${dirname(f)} was never fsynced`).toBe(true);
}

/** The group of KEYS written: each created, read back whole, every new folder's entry fsynced. */
async function expectGroupStored(store: FsStore, root: string): Promise<void> {
  expect(await store.writeMany(writesOf(KEYS))).toEqual([true, true, true]);
  for (const key of KEYS) expect(dec.decode((await store.get(key))!.body)).toBe(`body of ${key}`);
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
