// Reads session files: the whole file into a tree (migrated in memory when old, the file untouched), or only the header.
import { open } from 'node:fs/promises';
import { closeSync, openSync, readSync } from 'node:fs';
import { CURRENT_VERSION, checkHeader } from '../../shared/entry.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { parseSessionFile } from './parse-file.js';
import type { Problem, SplitLine } from '../../shared/jsonl.js';
import { SessionTree } from '../../shared/tree.js';
import { migrateSession } from '../../shared/migrate.js';
import { SessyncError } from '../../shared/errors.js';

export interface OpenSession {
  path: string;
  header: SessionHeader;
  entries: SessionEntry[];
  /** Lines not loaded (1-based, counting the header). */
  problems: Problem[];
  tree: SessionTree;
  /** Version of `header`/`entries` (after an in-memory migration: the current one). */
  version: number;
  /** Version written in the file. */
  fileVersion: number;
  /** The file ends in a line cut off mid-write. */
  tornTail: boolean;
  /** Lines that held several JSON values (two writers raced), each value loaded on its own. */
  splitLines: SplitLine[];
}

function notFound(path: string, e: unknown): unknown {
  return (e as NodeJS.ErrnoException).code === 'ENOENT' ? new SessyncError('not_found', `session file ${path} does not exist`) : e;
}

/** Parses a whole session file and builds its tree; an old format is migrated in memory only (the file is not written). */
export async function readSession(path: string): Promise<OpenSession> {
  const parsed = parseSessionFile(path);
  if (!parsed.header) {
    const why = parsed.problems[0]?.reason ?? 'empty file';
    throw new SessyncError('corrupt', `${path} is not a session file: ${why}`, { details: { problems: parsed.problems.slice(0, 20) } });
  }
  let header = parsed.header;
  let entries = parsed.entries;
  if (parsed.version < CURRENT_VERSION) {
    const m = await migrateSession(parsed);
    header = m.header;
    entries = m.entries;
  }
  return {
    path,
    header,
    entries,
    problems: parsed.problems,
    tree: SessionTree.from(entries),
    version: Math.max(parsed.version, CURRENT_VERSION),
    fileVersion: parsed.version,
    tornTail: parsed.tornTail,
    splitLines: parsed.splitLines,
  };
}

export const HEADER_PREFIX_BYTES = 4096;

export type HeaderRead = { ok: true; header: SessionHeader } | { ok: false; reason: string };

export function parseHeaderPrefix(buf: Buffer, bytesRead: number): HeaderRead {
  const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
  if (nl < 0 && bytesRead === HEADER_PREFIX_BYTES) return { ok: false, reason: `first line longer than ${HEADER_PREFIX_BYTES} bytes` };
  // A byte order mark is invisible in the parse error's quote of the line; pi, Claude Code and Codex never write one, so
  // the file was saved by something else (an editor's "UTF-8 with BOM"). Refused, not stripped: no bytes change silently.
  if (bytesRead >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
    return { ok: false, reason: 'first line starts with a UTF-8 byte order mark (bytes EF BB BF), which pi, Claude Code and Codex never write: remove those 3 bytes (an editor saving as "UTF-8 with BOM" adds them)' };
  }
  const text = buf.toString('utf8', 0, nl < 0 ? bytesRead : nl);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `first line is not JSON (${(e as Error).message})` };
  }
  const why = checkHeader(v);
  return why === null ? { ok: true, header: v as SessionHeader } : { ok: false, reason: why };
}

/** Reads only the first line (at most 4 KiB) of a session file. */
export async function readHeader(path: string): Promise<HeaderRead> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw notFound(path, e);
  }
  try {
    const buf = Buffer.alloc(HEADER_PREFIX_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEADER_PREFIX_BYTES, 0);
    return parseHeaderPrefix(buf, bytesRead);
  } finally {
    await fh.close();
  }
}

const prefixBuf = Buffer.alloc(HEADER_PREFIX_BYTES);

/**
 * Synchronous readHeader for listing thousands of files: a sync open/read/close costs a few microseconds,
 * an async one tens (thread pool round trips), and list does nothing else meanwhile.
 */
export function readHeaderSync(path: string): HeaderRead {
  const fd = openSessionSync(path);
  try {
    return parseHeaderPrefix(prefixBuf, readSync(fd, prefixBuf, 0, HEADER_PREFIX_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/** A session file opened for reading (sync), or SessyncError('not_found') when it does not exist. */
export function openSessionSync(path: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    throw notFound(path, e);
  }
}
