// Parses a session file in 64 KiB chunks: peak memory stays near the parsed entries, not text + entries.
import { isAscii } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { parseSessionChunksSync, type ByteDecoder, type ParsedSession } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';

/** Small enough to stay in the CPU cache while its lines are decoded (1 MiB reads measured slower). */
const CHUNK_BYTES = 1 << 16;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Node's own decoders. Latin-1 is a plain copy, several times cheaper than Node 20's UTF-8 decoder,
 * and exact for ASCII, which most of a session is; only lines with other bytes pay for UTF-8.
 */
const nodeDecoder: ByteDecoder = {
  isAscii: (bytes, start, end) => isAscii(new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start)),
  oneByte: (bytes, start, end) => asBuffer(bytes).toString('latin1', start, end),
  utf8: (bytes, start, end) => asBuffer(bytes).toString('utf8', start, end),
};

function* readChunks(fd: number): Generator<Uint8Array> {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) yield buf.subarray(0, n);
}

/**
 * Synchronous on purpose: reading one file is all the caller does meanwhile, and a sync read per chunk
 * avoids a thread-pool round trip per chunk. Throws SessyncError('not_found') for a missing file.
 */
export function parseSessionFile(path: string): ParsedSession {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SessyncError('not_found', `session file ${path} does not exist`);
    throw e;
  }
  try {
    return withBulkHeap(fstatSync(fd).size, () => parseSessionChunksSync(readChunks(fd), nodeDecoder));
  } finally {
    closeSync(fd);
  }
}

/** From this size on, loading a file lets the heap grow instead of running full collections. */
const BULK_BYTES = 16 << 20;

/**
 * Nearly everything allocated while a session loads stays live (it is the session), so a full
 * collection then marks and moves the whole growing session for nothing. A fresh process starts
 * with a small old-generation limit and would run those collections at ~15 MB and ~80 MB of a
 * large session; a larger growing factor while loading skips them (0 restores V8's own choice).
 * V8 reads this flag each time it sets a new limit, so changing it at run time is safe.
 */
export function withBulkHeap<T>(bytes: number, load: () => T): T {
  if (bytes < BULK_BYTES) return load();
  setFlagsFromString('--heap-growing-percent=900');
  try {
    return load();
  } finally {
    setFlagsFromString('--heap-growing-percent=0');
  }
}
