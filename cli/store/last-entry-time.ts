// A session file's header and newest entry time from its first and last bytes (4 KiB in all, as a rule): what `list` sorts by, as pi does.
import { closeSync, openSync, readSync } from 'node:fs';
import { HEADER_PREFIX_BYTES, parseHeaderPrefix, type HeaderRead } from './session-reader.js';
import type { TailState } from './tail-state.js';

/**
 * A cold list reads at most 4 KiB of a file: 1 KiB for the header line (a few hundred bytes; a longer one costs a
 * second read of the 4 KiB prefix) and 3 KiB for the last lines (a longer last line widens the window).
 */
const HEAD_BYTES = 1024;
const TAIL_BYTES = HEADER_PREFIX_BYTES - HEAD_BYTES;
/** A last line longer than this (a pasted image) is not read through: the header time stands in for it. */
const MAX_TAIL_SCAN = 1 << 20;

const headBuf = Buffer.alloc(HEADER_PREFIX_BYTES);

function timeOf(ts: unknown): number {
  return typeof ts === 'string' ? Date.parse(ts) : NaN;
}

/** The newest `timestamp` among the entry lines that start inside buf (buf starts at file byte `base`). */
function newestIn(buf: Buffer, base: number): string | null {
  // A window that does not start the file starts inside a line: skip to the first line start.
  let pos = base === 0 ? 0 : buf.indexOf(0x0a) + 1;
  if (base !== 0 && pos === 0) return null;
  let best: string | null = null;
  while (pos < buf.length) {
    let nl = buf.indexOf(0x0a, pos);
    if (nl < 0) nl = buf.length; // a last line without its newline: used when it parses (pi's own last line)
    if (base + pos !== 0) {
      try {
        const ts = (JSON.parse(buf.toString('utf8', pos, nl)) as { timestamp?: unknown }).timestamp;
        if (typeof ts === 'string' && !Number.isNaN(timeOf(ts)) && (best === null || timeOf(ts) > timeOf(best))) best = ts;
      } catch {
        // a torn or damaged line: doctor reports it; here it only has no time to offer
      }
    }
    pos = nl + 1;
  }
  return best;
}

/**
 * The newest entry time a tail state gives: its newest tip's. A tip without a time (Claude Code ends its files with
 * last-prompt and cost-state lines, which have none) says nothing of the lines before it: then the newest time the
 * state counted over the agents' lines stands in. undefined: the state cannot say (it did not count one), the tail is read.
 */
export function newestOfState(t: Pick<TailState, 'tips' | 'newestTimedAt'>): string | null | undefined {
  let best: string | null = null;
  let timeless = false;
  for (const id in t.tips) {
    const ts = t.tips[id]!;
    if (Number.isNaN(timeOf(ts))) timeless = true;
    else if (best === null || timeOf(ts) > timeOf(best)) best = ts;
  }
  if (!timeless) return best;
  const agents = t.newestTimedAt;
  if (typeof agents !== 'string') return undefined;
  return best !== null && timeOf(best) > timeOf(agents) ? best : agents;
}

export interface HeadAndTail {
  header: HeaderRead;
  /** The newest entry time found (ISO); null when the file has no entry line that could be read. */
  lastEntryAt: string | null;
}

/**
 * Reads the header and the newest entry time of a file of `size` bytes. The tail state (left by an append or an
 * open, peeked by the caller) gives the time for free when it describes exactly this size and mtime; otherwise the last 3 KiB are read.
 * The newest time, not the file's mtime: mtime is the pull time on another machine, the entry times are the same.
 */
export function readHeadAndTailSync(path: string, size: number, mtimeMs: number, t: TailState | null): HeadAndTail {
  const fd = openSync(path, 'r');
  try {
    // A file of at most 4 KiB is read in one go; a larger one first reads only the head of its header.
    let n = readSync(fd, headBuf, 0, size <= HEADER_PREFIX_BYTES ? HEADER_PREFIX_BYTES : HEAD_BYTES, 0);
    if (n === HEAD_BYTES && headBuf.subarray(0, n).indexOf(0x0a) < 0) n = readSync(fd, headBuf, 0, HEADER_PREFIX_BYTES, 0);
    const header = parseHeaderPrefix(headBuf, n);
    if (!header.ok) return { header, lastEntryAt: null };
    if (t !== null && t.size === size && t.mtimeMs === mtimeMs) {
      const known = newestOfState(t);
      if (known !== undefined) return { header, lastEntryAt: known };
    }
    if (size <= HEADER_PREFIX_BYTES) return { header, lastEntryAt: newestIn(headBuf.subarray(0, n), 0) };
    for (let want = TAIL_BYTES; ; want *= 4) {
      const len = Math.min(want, size);
      const buf = Buffer.alloc(len);
      const got = readSync(fd, buf, 0, len, size - len);
      const found = newestIn(buf.subarray(0, got), size - len);
      if (found !== null || len === size || want >= MAX_TAIL_SCAN) return { header, lastEntryAt: found };
    }
  } finally {
    closeSync(fd);
  }
}
