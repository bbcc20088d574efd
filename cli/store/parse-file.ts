// Parses a session file in 1 MiB chunks: peak memory stays near the parsed entries, not text + entries.
import { closeSync, openSync, readSync } from 'node:fs';
import { parseSessionChunksSync, type ParsedSession } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';

const CHUNK_BYTES = 1 << 20;

function* readChunks(fd: number): Generator<Uint8Array> {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) yield buf.subarray(0, n);
}

/**
 * Synchronous on purpose: reading one file is all the caller does meanwhile, and a sync read per chunk
 * avoids a thread-pool round trip per MiB. Throws SessyncError('not_found') for a missing file.
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
    return parseSessionChunksSync(readChunks(fd));
  } finally {
    closeSync(fd);
  }
}
