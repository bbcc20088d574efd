// Appends bytes to an open O_APPEND file whole and durably, or takes back what a failed append added (a full disk).
import type { FileHandle } from 'node:fs/promises';
import { SessyncError } from '../../shared/errors.js';
import { fsError } from '../fs-error.js';

/**
 * Writes all of `data` at the end of `fh` (opened with O_APPEND) and fsyncs it. One write(2) can write only part
 * (the disk filled up mid-way), which Node reports as a count, not an error: the rest is written until it all is or a
 * write fails. When a write or the fsync fails, what this call added is cut off again, so the file is as it was
 * rather than ending in half an entry (read as a torn line by the next reader); the error (as fsError, naming `path`)
 * is thrown. The cut is made only when the file's size shows that its last bytes are this call's: a program that
 * appends without sessync's lock (pi does) and wrote meanwhile is never cut; its file keeps the torn tail, which the
 * next append ends with a newline first, and the error says so.
 */
export async function appendWhole(fh: FileHandle, path: string, data: Uint8Array): Promise<void> {
  const before = (await fh.stat()).size;
  let written = 0;
  try {
    while (written < data.byteLength) {
      const { bytesWritten } = await fh.write(data, written, data.byteLength - written);
      if (bytesWritten <= 0) throw new SessyncError('internal', `${path}: a write of ${data.byteLength - written} bytes wrote none`);
      written += bytesWritten;
    }
    await fh.sync();
  } catch (e) {
    const err = fsError(e, path);
    const taken = await takeBack(fh, before, written);
    if (taken || !(err instanceof SessyncError)) throw err;
    throw new SessyncError(err.code, `${err.message}; ${written} bytes of this append stayed at the end of ${path} (another program wrote to it meanwhile) and read as a torn line, ended by the next append`, {
      retryable: err.retryable,
      details: err.details,
      cause: e,
    });
  }
}

/** Cuts the file back to `before` when it is exactly `before + written` bytes long; whether the file is as before. */
async function takeBack(fh: FileHandle, before: number, written: number): Promise<boolean> {
  if (written === 0) return true; // a write(2) that fails writes nothing
  try {
    if ((await fh.stat()).size !== before + written) return false;
    await fh.truncate(before);
    await fh.sync();
    return true;
  } catch {
    // The cut failed too (the disk's own fault): the caller's error says the partial bytes stayed.
    return false;
  }
}
