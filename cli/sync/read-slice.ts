// Reading a session file's tail for a push: complete lines after an offset, one batch at most, invalid lines reported.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { checkEntry, type SessionEntry } from '../../shared/entry.js';
import { HEADER_PREFIX_BYTES, openSessionSync, parseHeaderPrefix, readHeaderSync, type HeaderRead } from '../store/session-reader.js';
import { parseJsonLine, serializeLine } from '../../shared/jsonl.js';
import { ENTRY_ID_RE, LIMITS } from '../../shared/wire.js';
import { findTooDeepText, findTooDeepValue } from '../../shared/json-limits.js';
import { releaseScanned, sameBytes, scanEntryLine, scanned } from '../../shared/entry-line-scan.js';
import { readBuffer, recycleRead } from './read-buffers.js';

/** Body bytes per batch: JSON escaping can double a body, and the whole request must stay under maxRequestBytes. */
const MAX_BATCH_BYTES = Math.min(LIMITS.maxBatchBytes, Math.floor((LIMITS.maxRequestBytes - 256 * 1024) / 2));
/** $SESSYNC_SYNC_BATCH_BYTES lowers it (tests use small batches to get many kill points out of small sessions). */
const BATCH_BYTES = Math.min(MAX_BATCH_BYTES, Number(process.env.SESSYNC_SYNC_BATCH_BYTES) || MAX_BATCH_BYTES);
const READ_CHUNK = MAX_BATCH_BYTES + 64 * 1024;

export interface Slice {
  /** Entries in the batch. */
  count: number;
  /** Body bytes: the entries' lines, each with its '\n'. */
  bytes: number;
  /** Offset after the last line consumed (sent, skipped or invalid). */
  end: number;
  /** Lines not sent as they are: left out, or (`sent`) sent changed; each is reported, none silently. */
  skipped: { offset: number; reason: string; sent?: true }[];
  /** tailHash(path, end), from the bytes read (absent when they were not all in one read). */
  tailHash?: string;
  /**
   * The body (the lines, each with its '\n') as the file's own bytes, when they lie next to each other in one read
   * (no line left out or rewritten between them): no join, no text kept, hashed and sent as they are.
   */
  raw?: Buffer;
  /** `raw` is valid UTF-8: every line of it was one the scan is certain of (it checks the encoding), none parsed. */
  rawUtf8?: true;
  /** Otherwise the entries' lines as text, each without its '\n' (a line of several values: one line per value). */
  lines?: string[];
}

/** What a push's first read of a file gives besides its first slice (see readFirst). */
export interface FirstRead {
  slice: Slice;
  /** The header, as readHeaderSync would read it (from the same bytes). */
  header: HeaderRead;
  /** The file's size when it was read. */
  size: number;
  /**
   * The whole file came in that one read, every line after the header is an entry of the slice (none skipped, split
   * or already on the server), and each entry is the child of the one before: the file's one tip, if it has any, is
   * its last entry.
   */
  wholeChain: boolean;
}

/**
 * Reads complete lines after `from`, up to one batch; a last line without '\n' (being written, or torn) waits.
 * The file is read with synchronous calls: a many-session push opens thousands of files, and an async open, read
 * and close each cost a thread-pool round trip (tens of microseconds) where the call itself costs a few.
 */
export async function readSlice(path: string, from: number, size: number, skipIds: ReadonlySet<string>, check: LineCheck = 'scan'): Promise<Slice> {
  const fd = openSync(path, 'r');
  try {
    const r = sliceOf(fd, from, size, skipIds, check);
    for (const b of r.spare) recycleRead(b);
    return r.slice;
  } finally {
    closeSync(fd);
  }
}

/** A first push's read: the file from its start (one open, its size from the open file) and its header from the same bytes. */
export function readFirst(path: string, skipIds: ReadonlySet<string>, check: LineCheck = 'scan'): FirstRead {
  const fd = openSessionSync(path);
  try {
    const size = fstatSync(fd).size;
    const r = sliceOf(fd, 0, size, skipIds, check);
    const header = r.first ? parseHeaderPrefix(r.first.buf, Math.min(r.first.bytesRead, HEADER_PREFIX_BYTES)) : readHeaderSync(path);
    for (const b of r.spare) recycleRead(b);
    return { slice: r.slice, header, size, wholeChain: r.plain && r.chain && r.first?.bytesRead === size && r.slice.end === size };
  } finally {
    closeSync(fd);
  }
}

interface SliceRead {
  slice: Slice;
  /** The first read (from offset 0 only): its buffer and how much of it was filled. */
  first?: { buf: Buffer; bytesRead: number };
  /** Every line after the header went into the slice as one entry (none skipped, split, glued or already pushed). */
  plain: boolean;
  /** Each entry of the slice names the one before it as its parent. */
  chain: boolean;
  /** The reads' buffers that the slice keeps no view of: free once the caller is done with `first`. */
  spare: Buffer[];
}

/**
 * How each line is checked: 'scan' takes a line scanEntryLine is certain of without parsing it (and parses only the
 * others); 'parse' parses every line, the reference the scan is tested against (same slice, byte for byte).
 */
export type LineCheck = 'scan' | 'parse';

/** readSlice on an open file. */
function sliceOf(fd: number, from: number, size: number, skipIds: ReadonlySet<string>, check: LineCheck): SliceRead {
  const scan = check === 'scan';
  const out: Slice = { count: 0, bytes: 0, end: from, skipped: [] };
  let first: SliceRead['first'];
  let plain = true;
  let chain = true;
  /** The id of the last entry taken: its bytes (an id scanEntryLine accepted is ASCII), or its text from a full parse. */
  const last: { buf: Buffer | null; start: number; end: number; text: string | undefined } = { buf: null, start: 0, end: 0, text: undefined };
  /** The bytes of the lines taken so far, while they are one run of one read: their text is not kept. */
  let run: { buf: Buffer; from: number; to: number } | null = null;
  /** The lines' text, once they are not one run (the run's lines decoded again then: it happens rarely). */
  let lines: string[] | null = null;
  const asLines = (): string[] => (lines ??= run ? linesOf(run.buf, run.from, run.to) : []);
  /** Whether a line taken by the full check (not the scan) went into the run. */
  let parsedInRun = false;
  /** Every buffer read into; all but the one the body lies in (if it is raw) are spare at the end. */
  const bufs: Buffer[] = [];
  const finish = (): SliceRead => {
    releaseScanned(); // the scan's view of the last read goes: the slice keeps what it needs of it
    if (lines === null && run && out.count > 0) {
      out.raw = run.buf.subarray(run.from, run.to);
      if (!parsedInRun) out.rawUtf8 = true;
    }
    else out.lines = asLines();
    const kept = out.raw ? run!.buf : null;
    return { slice: out, ...(first ? { first } : {}), plain: plain && out.skipped.length === 0, chain, spare: bufs.filter((b) => b !== kept) };
  };
  let pos = from;
  while (pos < size && out.count < LIMITS.maxEntriesPerBatch) {
    const len = Math.min(READ_CHUNK, size - pos);
    const buf = readBuffer(len); // filled by the read; only its first bytesRead bytes are looked at
    bufs.push(buf);
    const bytesRead = readSync(fd, buf, 0, len, pos);
    if (pos === 0) first = { buf, bytesRead };
    let start = 0;
    let progressed = false;
    const done = (): SliceRead => {
      // The hash a later push checks the offset by, from this read when it holds the bytes (no open of its own).
      const at = out.end - pos;
      if (at >= TAIL_BYTES || (pos === 0 && at > 0)) out.tailHash = hashTail(buf.subarray(Math.max(0, at - TAIL_BYTES), at));
      return finish();
    };
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0 || nl >= bytesRead) break;
      const lineBytes = nl - start;
      const lineOffset = pos + start;
      if (out.bytes + lineBytes + 1 > BATCH_BYTES && out.count > 0) {
        return done(); // batch full: this line starts the next one
      }
      const lineStart = start;
      start = nl + 1;
      progressed = true;
      out.end = pos + start;
      if (lineBytes === 0 || (buf[lineStart] !== 0x7b && buf.toString('utf8', lineStart, nl).trim() === '')) continue;
      const isHeader = lineOffset === 0; // the header goes in the session meta, not in a batch
      if (!isHeader && lineBytes > LIMITS.maxEntryBytes) {
        out.skipped.push({ offset: lineOffset, reason: `entry of ${lineBytes} bytes is over the ${LIMITS.maxEntryBytes}-byte limit` });
        continue;
      }
      if (scan && !isHeader && scanEntryLine(buf, lineStart, nl)) {
        // Certainly an entry every check accepts (one object, valid UTF-8, within the depth limit, an id the server
        // takes): no text, no value made of it. Its id and parent are compared as bytes.
        const { idStart, idEnd, parentStart, parentEnd } = scanned;
        if (skipIds.size > 0 && skipIds.has(buf.toString('latin1', idStart, idEnd))) {
          plain = false;
          continue; // pulled from the server: it has it
        }
        if (out.count > 0) {
          if (parentStart < 0) chain = false;
          else if (last.buf) chain &&= sameBytes(buf, parentStart, parentEnd, last.buf, last.start, last.end);
          else chain &&= buf.toString('utf8', parentStart, parentEnd) === last.text;
        }
        last.buf = buf;
        last.start = idStart;
        last.end = idEnd;
        if (lines === null && run === null) run = { buf, from: lineStart, to: start };
        else if (lines === null && run!.buf === buf && run!.to === lineStart) run!.to = start;
        else asLines().push(buf.toString('utf8', lineStart, nl));
        out.bytes += lineBytes + 1;
        if (++out.count >= LIMITS.maxEntriesPerBatch) return done();
        continue;
      }
      const text = buf.toString('utf8', lineStart, nl);
      // Depth on the text first (one cheap scan); only a line too deep as a whole has its values looked at.
      // The server refuses a whole batch over one such entry: left out here, or the session never gets through.
      const deepLine = findTooDeepText(text, LIMITS.maxJsonDepth) !== null;
      // A line holding several values (two writers raced) is sent as one line per value, as readers load it.
      const parsed = parseJsonLine(text);
      if (!isHeader) for (const e of parsed.errors) out.skipped.push({ offset: lineOffset, reason: `not JSON (${e})` });
      if (parsed.pieces > 1 || (isHeader && parsed.values.length > 1)) plain = false;
      // An entry glued onto the header line still goes.
      for (const v of isHeader ? parsed.values.slice(1) : parsed.values) {
        if (deepLine && (parsed.pieces === 1 || findTooDeepValue(v, LIMITS.maxJsonDepth))) {
          out.skipped.push({ offset: lineOffset, reason: `entry nests JSON deeper than ${LIMITS.maxJsonDepth} levels, the server's limit` });
          continue;
        }
        const why = checkEntry(v);
        if (why) {
          out.skipped.push({ offset: lineOffset, reason: why });
          continue;
        }
        const e = v as SessionEntry;
        if (!ENTRY_ID_RE.test(e.id)) {
          // The server refuses the whole batch over one such id: left out here, or the session never gets through.
          out.skipped.push({ offset: lineOffset, reason: `entry id "${e.id.slice(0, 80)}" is not one the server accepts (letters, digits, _ . : - only, at most 128)` });
          continue;
        }
        if (skipIds.has(e.id)) {
          plain = false;
          continue; // pulled from the server: it has it
        }
        if (out.count > 0 && e.parentId !== (last.buf ? last.buf.toString('latin1', last.start, last.end) : last.text)) chain = false;
        last.buf = null;
        last.text = e.id;
        if (parsed.pieces > 1) {
          const line = serializeLine(e);
          asLines().push(line);
          out.bytes += Buffer.byteLength(line) + 1;
        } else {
          if (lines === null && run === null) run = { buf, from: lineStart, to: start };
          else if (lines === null && run!.buf === buf && run!.to === lineStart) run!.to = start;
          else asLines().push(text);
          parsedInRun = true; // its text came from a decoding that replaces invalid UTF-8: its bytes may not be valid
          out.bytes += lineBytes + 1;
        }
        // Its text was decoded with U+FFFD for each byte that is not UTF-8, and that text is what goes (the server and
        // every reader take UTF-8 only): the entry is kept whole, so its children keep their parent, and reported changed.
        if (!isUtf8(buf.subarray(lineStart, nl))) out.skipped.push({ offset: lineOffset, reason: 'sent with U+FFFD in place of bytes that are not UTF-8 (other machines get it so)', sent: true });
        out.count++;
      }
      if (out.count >= LIMITS.maxEntriesPerBatch) return done();
    }
    if (!progressed) {
      if (bytesRead === len && pos + len < size) {
        // A line longer than a read: far over the entry limit. Skipped (and reported) so later entries still go.
        const nl = nextNewline(fd, pos + len, size);
        if (nl < 0) return finish(); // still being written: the next push looks again
        out.skipped.push({ offset: pos, reason: `entry of ${nl - pos} bytes is over the ${LIMITS.maxEntryBytes}-byte limit` });
        out.end = nl + 1;
        pos = nl + 1;
        continue;
      }
      return done(); // only an unfinished last line remains
    }
    if (pos + start >= size || out.count >= LIMITS.maxEntriesPerBatch) return done();
    pos += start;
  }
  return finish();
}

/** The lines of bytes [from, to) of `buf` (each ending in '\n'), decoded as they were parsed. */
function linesOf(buf: Buffer, from: number, to: number): string[] {
  const out: string[] = [];
  for (let at = from; at < to; ) {
    const nl = buf.indexOf(0x0a, at);
    out.push(buf.toString('utf8', at, nl));
    at = nl + 1;
  }
  return out;
}

/** Offset of the first '\n' at or after `from` (before `size`), or -1. */
function nextNewline(fd: number, from: number, size: number): number {
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let pos = from; pos < size; ) {
    const bytesRead = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
    if (bytesRead === 0) break;
    const i = buf.subarray(0, bytesRead).indexOf(0x0a);
    if (i >= 0) return pos + i;
    pos += bytesRead;
  }
  return -1;
}

/** Bytes before the pushed offset that are hashed to notice a rewritten file (one byte alone misses most rewrites). */
const TAIL_BYTES = 64;

function hashTail(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex').slice(0, 16);
}

/** Short hash of the TAIL_BYTES bytes before `offset` (fewer at the start of the file); null when the file is shorter. */
export async function tailHash(path: string, offset: number): Promise<string | null> {
  const from = Math.max(0, offset - TAIL_BYTES);
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(offset - from);
    const bytesRead = readSync(fd, b, 0, b.length, from);
    if (bytesRead !== b.length || b[b.length - 1] !== 0x0a) return null;
    return hashTail(b);
  } finally {
    closeSync(fd);
  }
}
