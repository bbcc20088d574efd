// Appends bytes to an open O_APPEND file whole and durably, or takes back what a failed append added (a full disk).
import { fstatSync, ftruncateSync, writeSync } from 'node:fs';
import { statfs, type FileHandle } from 'node:fs/promises';
import { SessyncError } from '../../shared/errors.js';
import { fsError } from '../fs-error.js';

/**
 * Writes all of `data` at the end of `fh` (opened with O_APPEND) and fsyncs it. One write(2) can take only part (the
 * disk filled up mid-way, a file size limit; Node reports a count, not an error). The rest is written only while the
 * file still ends with this call's bytes, checked and written back to back on this thread: with O_APPEND it would
 * otherwise land after whatever another program (pi appends without sessync's lock) wrote in between, breaking both
 * lines. When a write or the fsync fails, what this call added is cut off again, so the file is as it was rather
 * than ending in half an entry; the error (as fsError, naming `path`) is thrown. The cut is made only when the file's
 * size shows that its last bytes are this call's: a program that wrote meanwhile is never cut; the file then keeps
 * this call's bytes, which the error counts (whole lines among them are entries written, and a retry would write
 * them twice, so it is then not called retryable). `beforeSync` runs once every byte is written, before the fsync.
 */
export async function appendWhole(fh: FileHandle, path: string, data: Uint8Array, opts: { beforeSync?: () => void } = {}): Promise<void> {
  const before = (await fh.stat()).size;
  let written = 0;
  try {
    await roomFor(path, before, data.byteLength);
    written = Math.max(0, (await fh.write(data, 0, data.byteLength)).bytesWritten);
    while (written < data.byteLength) {
      // The next write(2) reports the cause (ENOSPC, EDQUOT, EFBIG) or, space freed meanwhile, takes more.
      if (fstatSync(fh.fd).size !== before + written) throw cutShort(path, written, data.byteLength);
      const n = writeSync(fh.fd, data, written, data.byteLength - written);
      if (n <= 0) throw cutShort(path, written, data.byteLength);
      written += n;
    }
    opts.beforeSync?.(); // all of it written, none of it durable yet (a kill point of the tests)
    await fh.sync();
  } catch (e) {
    const err = fsError(e, path);
    const taken = await takeBack(fh, before, written);
    if (taken === 'taken' || !(err instanceof SessyncError)) throw err;
    const { lines, torn } = keptLines(data.subarray(0, written));
    const why = taken === 'other-writer' ? 'another program wrote to it meanwhile, so they were not cut off' : 'cutting them off failed too';
    const whole = lines > 0 ? `${lines} whole line${lines === 1 ? '' : 's'} (entries now in the file, not to be written again)` : '';
    // A torn piece is ended by the next append of sessync's; a line another program wrote right after it is joined to it.
    const rest = torn ? `${whole ? `${whole} and ` : ''}a torn line (a line another program wrote right after it is joined to it and reads as damaged; \`sessync doctor\` shows it)` : whole;
    throw new SessyncError(err.code, `${err.message}; ${written} bytes of this append stayed at the end of ${path} (${why}): ${rest}`, {
      // Whole lines left in the file are written entries: a retry of the same append would write them twice.
      retryable: err.retryable && lines === 0,
      details: { ...(err.details as Record<string, unknown> | undefined), keptBytes: written, keptLines: lines },
      cause: e,
    });
  }
}

/**
 * Refuses, writing nothing, an append the file system has no room for by its own count (statfs): most short writes
 * never happen then, and a short write is what can leave a piece another program's line is joined to. A race with
 * another writer filling the disk, or a quota, still ends in the short-write path.
 */
async function roomFor(path: string, size: number, bytes: number): Promise<void> {
  const fs = await statfs(path);
  // A file system that counts no blocks (ramfs, a tmpfs of size=0, many FUSE mounts) has no figure to go by: only
  // the short-write path then guards the append.
  if (fs.blocks === 0) return;
  // The rest of the file's last block takes bytes without a free block.
  const slack = (fs.bsize - (size % fs.bsize)) % fs.bsize;
  // Root may write into the blocks reserved for it (ext4 keeps 5%), which bavail leaves out.
  const free = (process.getuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize + slack;
  if (free < bytes) throw Object.assign(new Error(`ENOSPC: no space left on device, write (${free} bytes free, ${bytes} needed)`), { code: 'ENOSPC', syscall: 'write', path });
}

/** The non-empty lines whole in `kept` (a leading newline that ends a torn line before it is not an entry), and whether a piece of a line ends it. */
function keptLines(kept: Uint8Array): { lines: number; torn: boolean } {
  let lines = 0;
  let len = 0;
  for (const b of kept) {
    if (b === 0x0a) {
      if (len > 0) lines++;
      len = 0;
    } else len++;
  }
  return { lines, torn: len > 0 };
}

/** A write the disk took only part of, with no errno to say why (or another program's bytes now after ours). */
function cutShort(path: string, written: number, wanted: number): SessyncError {
  return new SessyncError('fs_full', `cannot write to ${path}: it took ${written} of ${wanted} bytes (no space left, a quota or a file size limit). Free some space there, then retry`, {
    retryable: true,
    details: { path, written, wanted },
  });
}

/**
 * Cuts the file back to `before` when it is exactly `before + written` bytes long. The size check and the cut are two
 * system calls back to back on this thread (no await between them), which narrows, but cannot close, the window in
 * which a program appending without the lock could add a line that the cut would take with it.
 */
async function takeBack(fh: FileHandle, before: number, written: number): Promise<'taken' | 'other-writer' | 'failed'> {
  if (written === 0) return 'taken'; // a write(2) that fails writes nothing
  try {
    if (fstatSync(fh.fd).size !== before + written) return 'other-writer';
    ftruncateSync(fh.fd, before);
  } catch {
    return 'failed'; // the cut failed (the disk's own fault): the caller's error says the partial bytes stayed
  }
  // The file reads as before from here on; an fsync that fails too changes nothing the caller's error says.
  await fh.sync().catch(() => undefined);
  return 'taken';
}
