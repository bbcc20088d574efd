// The file store's fd calls: a small write never waits on the thread pool, a large one goes there, both write every byte.
import { execFileSync } from 'node:child_process';
import { closeSync, open, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SMALL_WRITE_BYTES, writeAllFd } from '../../worker/store/fd-io.js';
import { tempDir } from '../helpers/cli.js';

/**
 * Every thread of libuv's pool blocked in open(2) of a FIFO that has no writer yet (more opens than threads, queued
 * before anything else), until `release`. Work queued meanwhile cannot run, so whatever settles meanwhile did not use it.
 */
function blockThreadPool(dir: string): { release: () => Promise<void> } {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const opened = Array.from({ length: threads + 2 }, () => new Promise<number>((resolve, reject) => open(fifo, 'r', (e, fd) => (e ? reject(e) : resolve(fd)))));
  return {
    async release() {
      // A writer lets every blocked reader's open return; the writer stays open until they all have.
      const w = openSync(fifo, 'w');
      for (const fd of await Promise.all(opened)) closeSync(fd);
      closeSync(w);
    },
  };
}

/** 'settled' when `p` settles within this turn of the event loop's microtasks (before a setImmediate), else 'pending'. */
function settledNow(p: Promise<unknown>): Promise<'settled' | 'pending'> {
  return Promise.race([p.then(() => 'settled' as const), new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

describe('writeAllFd', () => {
  const t = tempDir('sessync-fd-io-');
  afterAll(() => t.cleanup());

  it('writes a small body in parts without the thread pool, and a large one through it, every byte in order', async () => {
    const pool = blockThreadPool(t.dir);
    const smallPath = join(t.dir, 'small');
    const bigPath = join(t.dir, 'big');
    const smallFd = openSync(smallPath, 'wx', 0o600);
    const bigFd = openSync(bigPath, 'wx', 0o600);
    const parts = [new TextEncoder().encode('header\n'), new Uint8Array(0), new Uint8Array(SMALL_WRITE_BYTES - 7).fill(120)];
    const big = new Uint8Array(SMALL_WRITE_BYTES + 1).fill(121);
    let small: Promise<void> | undefined;
    let large: Promise<void> | undefined;
    try {
      small = writeAllFd(smallFd, parts);
      expect(await settledNow(small)).toBe('settled');
      large = writeAllFd(bigFd, big);
      expect(await settledNow(large)).toBe('pending'); // the pool is blocked: the large write waits for it
    } finally {
      await pool.release();
      await Promise.allSettled([small, large]);
      closeSync(smallFd);
      closeSync(bigFd);
    }
    await large;
    const got = readFileSync(smallPath);
    expect(got.byteLength).toBe(SMALL_WRITE_BYTES);
    expect(got.subarray(0, 7).toString()).toBe('header\n');
    expect(got.subarray(7).every((b) => b === 120)).toBe(true);
    expect(readFileSync(bigPath).equals(Buffer.from(big))).toBe(true);
  });
});
