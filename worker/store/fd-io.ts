// The file store's calls that wait for the disk (fsync, and reading or writing a file's data), on the thread pool by fd.
import { closeSync, fsync, read, writev, writevSync } from 'node:fs';
import type { BlobBody } from './blob-store.js';

/**
 * Closes an fd whose outcome no longer matters (a read-only file, or a temp file whose failure is being reported):
 * an error closing it can change nothing stored, and must not replace the error that brought us here.
 */
export function closeAfter(fd: number): void {
  try {
    closeSync(fd);
  } catch (e) {
    console.warn(`sessync file store: closing fd ${fd} failed: ${(e as Error).message}`);
  }
}

/** fsync(2) of an open fd; resolves once the file's data and metadata are on disk. */
export function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
}

/** Reads up to `length` bytes at `position` into `buf` at `offset`; resolves with the bytes read (0 at the end). */
export function readFd(fd: number, buf: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buf, offset, length, position, (e, n) => (e ? reject(e) : resolve(n))));
}

/**
 * A body no larger than this is written synchronously: a few KiB into the page cache (a head, a meta, a token) take
 * microseconds, less than the CPU of the thread-pool round trip (futex, eventfd, epoll, promise) an async write costs.
 * Waiting for the disk is fsync's part, and that stays on the thread pool.
 */
export const SMALL_WRITE_BYTES = 16 * 1024;

/**
 * Writes all of `body` at the fd's current position, its parts in one writev (no joined copy of them); a short write
 * is continued from the first byte not written, never dropped. A small body (SMALL_WRITE_BYTES) synchronously.
 */
export async function writeAllFd(fd: number, body: BlobBody): Promise<void> {
  let parts = (Array.isArray(body) ? body : [body as Uint8Array]).filter((p) => p.byteLength > 0);
  const small = parts.reduce((n, p) => n + p.byteLength, 0) <= SMALL_WRITE_BYTES;
  while (parts.length > 0) {
    let written = small ? writevSync(fd, parts) : await new Promise<number>((resolve, reject) => writev(fd, parts, null, (e, n) => (e ? reject(e) : resolve(n))));
    const rest: Uint8Array[] = [];
    for (const p of parts) {
      if (written >= p.byteLength) written -= p.byteLength;
      else {
        rest.push(written > 0 ? p.subarray(written) : p);
        written = 0;
      }
    }
    parts = rest;
  }
}
