// An exclusive lock beside a file (`<file>.lock`, O_EXCL with the holder's pid) so two sessync processes never write at once.
import { open, readFile, stat, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { SessyncError } from '../../shared/errors.js';
import { PRIVATE_FILE } from './private-fs.js';
import { namingPath } from '../fs-error.js';

export interface LockOptions {
  /** How long to wait for another holder before failing with 'locked'. Default $SESSYNC_LOCK_TIMEOUT_MS or 10 s. */
  timeoutMs?: number;
}

interface LockInfo {
  pid: number;
  host: string;
  at: string;
}

const HOST = hostname();

function defaultTimeout(): number {
  const v = Number(process.env.SESSYNC_LOCK_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : 10_000;
}

export function lockPath(path: string): string {
  return `${path}.lock`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readInfo(lock: string): Promise<{ raw: string; info: LockInfo | null } | null> {
  let raw: string;
  try {
    raw = await readFile(lock, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const v = JSON.parse(raw) as LockInfo;
    return { raw, info: typeof v.pid === 'number' ? v : null };
  } catch {
    // A holder killed between create and write leaves an empty or partial file: judged by age below.
    return { raw, info: null };
  }
}

/** True when the lock's holder is gone: a dead pid on this host, or an unreadable lock older than a few seconds. */
async function isStale(lock: string, cur: { raw: string; info: LockInfo | null }): Promise<boolean> {
  if (cur.info && cur.info.host === HOST) return !pidAlive(cur.info.pid);
  if (cur.info) return false; // another host's holder (shared folder): cannot check its pid, wait for it
  try {
    const s = await stat(lock);
    return Date.now() - s.mtimeMs > 5_000;
  } catch {
    return false;
  }
}

/**
 * Removes a stale lock without racing another taker. Only the process that holds the break guard (`<lock>.break`,
 * made with O_EXCL) may remove a stale lock, and it removes it only if it still holds the stale content: a live
 * holder's lock is never removed, since nobody else removes a lock while the guard is held (its dead holder cannot
 * release it). (A rename-aside-then-link-back scheme let two holders exist when three processes met a dead holder's
 * lock at once.) Returns false when another process holds the guard: the caller waits a little and looks again.
 * A guard older than a few seconds was left by a breaker that died in its few-millisecond window, and is cleared.
 */
async function breakStale(lock: string, raw: string): Promise<boolean> {
  const guard = `${lock}.break`;
  try {
    await (await open(guard, 'wx', PRIVATE_FILE)).close();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const s = await stat(guard).catch(() => null);
    if (s && Date.now() - s.mtimeMs > 5_000) await unlinkIfThere(guard);
    return false;
  }
  try {
    const now = await readFile(lock, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    });
    if (now === raw) await unlinkIfThere(lock);
  } finally {
    await unlinkIfThere(guard);
  }
  return true;
}

async function unlinkIfThere(path: string): Promise<void> {
  await unlink(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}

/** Removes `lock` if it is still the file `fh` holds open (same device and inode). */
async function removeIfOurs(fh: FileHandle, lock: string): Promise<void> {
  const [mine, there] = await Promise.all([fh.stat(), stat(lock)]);
  if (mine.dev === there.dev && mine.ino === there.ino) await unlink(lock);
}

async function tryCreate(lock: string): Promise<boolean> {
  try {
    const fh = await open(lock, 'wx', PRIVATE_FILE);
    try {
      await fh.writeFile(JSON.stringify({ pid: process.pid, host: HOST, at: new Date().toISOString() } satisfies LockInfo));
    } catch (e) {
      // Made by this call (O_EXCL), so ours to remove: left empty (a full disk), it would hold up the retry as an
      // unreadable lock until it is a few seconds old. Only while the path is still our file: a write that hung long
      // enough for another process to judge the lock stale and take its own must not remove that one. Not removable:
      // the error still names it.
      await removeIfOurs(fh, lock).finally(() => fh.close().catch(() => undefined)).catch(() => undefined);
      throw namingPath(e, lock);
    }
    await fh.close();
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SessyncError('not_found', `folder of ${lock} does not exist`);
    throw e;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs fn while holding the lock of `path`; waits for other holders, takes over from dead ones, fails after the timeout. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const lock = lockPath(path);
  const timeoutMs = opts.timeoutMs ?? defaultTimeout();
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  let holder: LockInfo | null = null;
  for (;;) {
    if (await tryCreate(lock)) break;
    const cur = await readInfo(lock);
    if (cur === null) continue; // released between our attempt and the read
    holder = cur.info;
    if (await isStale(lock, cur)) {
      if (!(await breakStale(lock, cur.raw))) await sleep(delay);
      continue;
    }
    if (Date.now() >= deadline) {
      const who = holder ? `process ${holder.pid} on ${holder.host} since ${holder.at}` : 'another process';
      throw new SessyncError('locked', `${path} is locked by ${who}; waited ${timeoutMs} ms. If no sessync process is running, delete ${lock}.`, {
        details: { lock, holder },
      });
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }
}
