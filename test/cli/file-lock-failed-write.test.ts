// A lock whose pid cannot be written (a full 64 KiB tmpfs, root only) is removed again, but only while the lock path is
// still the file it made: another process's lock put there meanwhile survives.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lockPath, withFileLock } from '../../cli/store/file-lock.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`file-lock-failed-write: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('the lock of a write that fails on a full disk', () => {
  const disk = useTmpfs('64k');
  let other: ChildProcess | undefined;
  afterEach(() => {
    vi.restoreAllMocks();
    other?.kill();
    other = undefined;
    rmSync(join(disk.dir, 'filler'), { force: true });
  });

  it('nobody took the path: the failed lock is removed, and the retry after freeing space takes the lock', async () => {
    const target = join(disk.dir, 'plain.jsonl');
    fill(join(disk.dir, 'filler'));
    const ran = vi.fn(async () => 'ran');
    const e = await withFileLock(target, ran).then(() => null, (x: NodeJS.ErrnoException) => x);
    expect(e?.code).toBe('ENOSPC');
    expect(e?.path).toBe(lockPath(target));
    expect(ran).not.toHaveBeenCalled();
    expect(existsSync(lockPath(target)), 'the empty lock is not left to hold up the retry').toBe(false);
    rmSync(join(disk.dir, 'filler'));
    expect(await withFileLock(target, ran, { timeoutMs: 1_000 })).toBe('ran');
  });

  it('another process took the path before the removal (a mock of the lock write replaces the path as it fails): its lock survives', async () => {
    const target = join(disk.dir, 'taken.jsonl');
    const lock = lockPath(target);
    // The other holder is a live process on this host, so its lock is never judged stale.
    other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const theirs = JSON.stringify({ pid: other.pid, host: hostname(), at: new Date().toISOString() });
    const staged = join(disk.dir, 'their.lock');
    writeFileSync(staged, theirs); // written while there is room; moved onto the lock path later (a rename needs none)
    const probe = await open(join(disk.dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { writeFile: (this: unknown, ...a: unknown[]) => Promise<void> };
    await probe.close();
    rmSync(join(disk.dir, 'probe'));
    fill(join(disk.dir, 'filler'));

    // The real write fails on the full disk; the mock only adds the other process's takeover in that moment, between
    // the failed write and the removal (a window no real process can be timed into).
    const realWriteFile = proto.writeFile;
    const mock = vi.spyOn(proto, 'writeFile').mockImplementation(async function (this: unknown, ...a: unknown[]) {
      try {
        return await realWriteFile.apply(this, a);
      } catch (e) {
        renameSync(staged, lock);
        throw e;
      }
    });
    const ino = statSync(staged).ino;
    const e = await withFileLock(target, async () => 'ran').then(() => null, (x: NodeJS.ErrnoException) => x);
    expect(mock).toHaveBeenCalledTimes(1);
    expect(e?.code).toBe('ENOSPC');
    expect(existsSync(lock), 'the other process\'s lock is still there').toBe(true);
    expect(statSync(lock).ino).toBe(ino);
    expect(readFileSync(lock, 'utf8')).toBe(theirs);
  });
});
