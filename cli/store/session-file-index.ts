// The per-session index: built once, advanced over the bytes appended since (by anyone), re-indexed from where a changed file still agrees.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CURRENT_VERSION, checkEntry, checkHeader, type SessionEntry } from '../../shared/entry.js';
import { splitJsonValues } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';
import { canonicalIsoMs, decodeIndex, encodeBatch, EntryColumns, hashAsciiId, hashId, KIND, MAX_FIELD_BYTES, NO_PARENT, OTHER_PARENT, type IndexState } from './session-file-index-codec.js';
import { withFileLock } from './file-lock.js';
import { deferIndexWrite, dropIndexWrite } from './session-file-index-deferred.js';
import { withBulkHeap } from './parse-file.js';
import { cacheDir, cacheKey } from './paths.js';
import { PRIVATE_FILE, mkdirPrivate } from './private-fs.js';

export type { IndexState } from './session-file-index-codec.js';

const NL = 0x0a;
/** Small enough to stay in the CPU cache while its lines are decoded and parsed (as the full reader reads). */
const READ_BYTES = 1 << 16;
const TAIL_BYTES = 64;
const MAX_REASON = 300;

/**
 * Under sessync's home, not beside the session: the session folders are pi's (and are copied between machines by
 * people and tools, where byte offsets of this machine's file mean nothing), and the tail state and list caches live there too.
 */
export function indexPath(path: string): string {
  return join(cacheDir('index'), `${cacheKey(path)}.idx`);
}

/** What the last sessionFileIndex call in this process did, and from which byte it indexed: for tests and doctor output. */
export const lastIndexUpdate = { mode: 'none' as 'none' | 'current' | 'append' | 'cut' | 'rebuild', from: 0, to: 0 };

function note(mode: typeof lastIndexUpdate.mode, from: number, to: number): void {
  lastIndexUpdate.mode = mode;
  lastIndexUpdate.from = from;
  lastIndexUpdate.to = to;
}

export function kindOf(e: SessionEntry): number {
  switch (e.type) {
    case 'message': {
      const m = e.message as { role: string; provider?: unknown; model?: unknown };
      return m.role === 'assistant' && typeof m.provider === 'string' && typeof m.model === 'string' ? KIND.assistantModel : KIND.message;
    }
    case 'thinking_level_change':
      return KIND.thinking;
    case 'model_change':
      return KIND.model;
    case 'compaction':
      return KIND.compaction;
    case 'branch_summary':
      return KIND.branchSummary;
    case 'custom':
      return KIND.custom;
    case 'custom_message':
      return KIND.customMessage;
    case 'label':
      return KIND.label;
    case 'session_info':
      return typeof e.name === 'string' ? KIND.sessionName : KIND.sessionInfo;
    default:
      return KIND.other;
  }
}

export function clip(s: string): string {
  return s.length > MAX_REASON ? `${s.slice(0, MAX_REASON)}…` : s;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function decode(bytes: Buffer, start: number, end: number): string {
  // Latin-1 is a plain copy and exact for ASCII (most of a session); only other lines pay for UTF-8.
  return isAscii(bytes.subarray(start, end)) ? bytes.toString('latin1', start, end) : bytes.toString('utf8', start, end);
}

function isBlank(s: string): boolean {
  return s.length === 0 || (s.charCodeAt(0) !== 123 && s.trim() === '');
}

/** Longer than the index stores (checked by length first: a UTF-8 byte count per field and entry would add up). */
function tooLong(s: string): boolean {
  return s.length * 3 > MAX_FIELD_BYTES && Buffer.byteLength(s) > MAX_FIELD_BYTES;
}

function fieldsFit(e: SessionEntry): boolean {
  return !tooLong(e.id) && !tooLong(e.timestamp) && (e.parentId === null || !tooLong(e.parentId));
}

/**
 * One complete line (`text`, decoded from `length` bytes at file byte `offset`), judged as the full reader judges it.
 * `exact` false: `text` is the bytes read as Latin-1, one char per byte, which is the line itself when it is ASCII
 * and otherwise differs only inside its non-ASCII strings: same JSON structure (UTF-8 puts no byte below 0x80 in a
 * multi-byte character), so the same entries parse, with the same types, and only fields holding non-ASCII text read
 * differently. The index keeps nothing of a line but its id, parent, timestamp and kind, so it takes such a reading
 * when those are ASCII; otherwise, and for whatever it would report or keep, it returns false having changed
 * nothing, and the caller passes the exact text.
 */
function indexLine(s: IndexState, text: string, offset: number, length: number, exact: boolean): boolean {
  if (offset === 0) {
    if (!exact) return false;
    ++s.lines;
    // The header on line 1, as sessync and pi write it; anything else (a byte-order mark, a blank first line, an old format) is read whole.
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      v = null; // no header: the full reader reports the line
    }
    if (v === null || checkHeader(v) !== null) s.unsupported = 'the first line is not a session header';
    else {
      const h = v as { id: string; version?: number };
      s.headerId = h.id;
      s.version = h.version ?? 1;
      s.headerEnd = length + 1;
      if (s.version < CURRENT_VERSION) s.unsupported = `format version ${s.version}`;
    }
    return true;
  }
  if (text.length === 0) {
    ++s.lines;
    return true;
  }
  // A line not starting with '{' may be blank by Unicode's idea of white space: the exact text decides.
  if (text.charCodeAt(0) !== 123 && !exact) return false;
  if (isBlank(text)) {
    ++s.lines;
    return true;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    if (!exact) return false; // the message quotes the text
    const line = ++s.lines;
    if (splitJsonValues(text) !== null) s.unsupported = `line ${line} holds several JSON values`;
    else s.problems.push({ line, reason: clip(`invalid JSON: ${errText(err)}`) });
    return true;
  }
  const why = checkEntry(v);
  if (why !== null) {
    if (!exact) return false; // the reason quotes the entry
    s.problems.push({ line: ++s.lines, reason: clip(why) });
    return true;
  }
  const e = v as SessionEntry;
  const h = exact ? hashId(e.id) : hashAsciiId(e.id);
  if (h < 0) return false;
  const p = e.parentId;
  const c = s.entries;
  // The parent is the entry just before, most of the time: the same text as its id (which is exact, or ASCII).
  const prev = p !== null && c.lastId === p;
  if (!exact && p !== null && !prev && hashAsciiId(p) < 0) return false;
  const ms = canonicalIsoMs(e.timestamp);
  if (!exact && Number.isNaN(ms)) return false; // kept as text when it is not the canonical form: only exact text
  if (!fieldsFit(e)) {
    if (!exact) return false;
    s.unsupported = `line ${++s.lines} has an id or timestamp too long to index`;
    return true;
  }
  const line = ++s.lines;
  // A parent written after its child, or two lines with one id (pushNew's probe finds it): rare, and the full
  // reader's to judge (and word).
  if (c.parentText.size > 0) {
    for (const t of c.parentText.values()) {
      if (t === e.id) {
        s.unsupported = `line ${line} is the parent of an earlier line`;
        return true;
      }
    }
  }
  let parent: number = NO_PARENT;
  if (p !== null) parent = prev ? c.n - 1 : c.find(p);
  if (parent === -1 && p !== null) parent = OTHER_PARENT;
  if (c.pushNew(e.id, parent, parent === OTHER_PARENT ? p : null, e.timestamp, kindOf(e), line, offset, length, h, ms) >= 0) {
    s.unsupported = `line ${line} repeats the id ${e.id}`;
    return true;
  }
  if (s.recent !== undefined) keepRecent(s.recent, s, c.n - 1, e);
  return true;
}

/**
 * Line bytes of parsed entries kept for the reads after indexing (the context is read from the end of a session,
 * so the newest are kept), at most this many: a larger session keeps its last 128 MB.
 */
const RECENT_BYTES = 128 << 20;
let recentBytes = 0;
/** The oldest position still kept (positions are kept in order, so the budget drops them from the front). */
let recentFrom = 0;

function keepRecent(kept: (unknown | undefined)[], s: IndexState, i: number, e: SessionEntry): void {
  kept[i] = e;
  recentBytes += s.entries.length[i]!;
  // A compaction replaces what came before its first kept entry in the context: keeping those entries alive only
  // costs collections (most of a first open's extra time). An entry dropped here that is still needed (another
  // branch, the latest model change) is read from the file.
  let until = recentFrom;
  if (e.type === 'compaction') {
    const first = typeof e.firstKeptEntryId === 'string' ? s.entries.find(e.firstKeptEntryId) : -1;
    until = first >= 0 && first < i ? first : i;
  }
  for (; (recentBytes > RECENT_BYTES || recentFrom < until) && recentFrom < i; recentFrom++) {
    if (kept[recentFrom] === undefined) continue;
    kept[recentFrom] = undefined;
    recentBytes -= s.entries.length[recentFrom]!;
  }
}

/**
 * The lines in bytes [start, last] of a chunk read at file byte `base` (bytes[last] is '\n'); returns where indexing
 * stopped. The run is decoded as one Latin-1 string and each line is a slice of it, as the full reader does for an
 * ASCII run: one copy per chunk instead of one per line. A run that is not all ASCII is read so too when nothing
 * parsed is kept (see indexLine); only the lines that need it are decoded as UTF-8. When entries are kept, each
 * line that is not ASCII is decoded as UTF-8.
 */
function indexRun(s: IndexState, bytes: Buffer, start: number, last: number, base: number): number {
  let from = start;
  const ascii = isAscii(bytes.subarray(start, last));
  if (ascii || s.recent === undefined) {
    const text = bytes.toString('latin1', start, last + 1);
    for (let nl = text.indexOf('\n'); nl >= 0 && s.unsupported === null; nl = text.indexOf('\n', from - start)) {
      const end = start + nl;
      if (!indexLine(s, text.slice(from - start, nl), base + from, end - from, ascii)) indexLine(s, bytes.toString('utf8', from, end), base + from, end - from, true);
      from = end + 1;
      s.covered = base + from;
    }
    return from;
  }
  for (let nl = bytes.indexOf(NL, from); nl >= 0 && nl <= last && s.unsupported === null; nl = bytes.indexOf(NL, from)) {
    indexLine(s, decode(bytes, from, nl), base + from, nl - from, true);
    from = nl + 1;
    s.covered = base + from;
  }
  return from;
}

/**
 * Indexes the complete lines from s.covered up to byte `to`; a last line without its newline is left for the reader.
 * `keep`: the parsed entries are kept in s.recent for the reads that follow (else each dies as soon as it is indexed).
 */
function indexLines(s: IndexState, fd: number, to: number, keep: boolean): void {
  s.recent = keep ? [] : undefined;
  recentBytes = 0;
  recentFrom = s.entries.n;
  s.entries.deferRepeats = s.entries.n === 0; // a fresh build: repeated ids are looked for once, at the end
  const buf = Buffer.allocUnsafe(READ_BYTES);
  // Pieces of a line longer than what is left of a read: copied (buf is reused), joined once when it ends.
  let carry: Buffer[] = [];
  let carryStart = 0;
  let pos = s.covered;
  while (pos < to && s.unsupported === null) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
    if (n === 0) break;
    const chunk = buf.subarray(0, n);
    const base = pos;
    pos += n;
    let from = 0;
    if (carry.length > 0) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        carry.push(Buffer.from(chunk));
        continue;
      }
      carry.push(chunk.subarray(0, nl + 1));
      const joined = Buffer.concat(carry);
      carry = [];
      indexLine(s, decode(joined, 0, joined.length - 1), carryStart, joined.length - 1, true);
      s.covered = carryStart + joined.length;
      from = nl + 1;
    }
    const last = chunk.lastIndexOf(NL);
    if (from <= last && s.unsupported === null) from = indexRun(s, chunk, from, last, base);
    if (from < chunk.length) {
      carry.push(Buffer.from(chunk.subarray(from)));
      carryStart = base + from;
    }
  }
  if (s.entries.deferRepeats) settleRepeats(s);
}

/**
 * After a build that did not look for repeated ids as it went: the state indexing would have stopped in at the first
 * repeat (see indexLine), which comes before any other reason to stop, since the entries before that reason were pushed.
 */
function settleRepeats(s: IndexState): void {
  const c = s.entries;
  c.deferRepeats = false;
  const j = c.firstRepeat();
  if (j < 0) return;
  const line = c.line[j]!;
  s.unsupported = `line ${line} repeats the id ${c.id(j)}`;
  s.covered = c.offset[j]! + c.length[j]! + 1;
  s.lines = line;
  s.problems = s.problems.filter((p) => p.line < line);
  s.recent = undefined;
  c.truncate(j);
}

export function readAt(fd: number, start: number, end: number): Buffer {
  const b = Buffer.allocUnsafe(Math.max(0, end - start));
  let done = 0;
  while (done < b.length) {
    const n = readSync(fd, b, done, b.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return b.subarray(0, done);
}

export function tailHashAt(fd: number, covered: number): string {
  return createHash('sha1').update(readAt(fd, Math.max(0, covered - TAIL_BYTES), covered)).digest('hex');
}

/** The header line still says what the index recorded. */
function headerAgrees(fd: number, s: IndexState, size: number): boolean {
  if (s.headerEnd <= 0 || size < s.headerEnd) return false;
  const b = readAt(fd, 0, s.headerEnd);
  if (b[b.length - 1] !== NL) return false;
  try {
    const h = JSON.parse(b.toString('utf8', 0, b.length - 1)) as { id?: unknown; version?: number };
    return checkHeader(h) === null && h.id === s.headerId && (h.version ?? 1) === s.version;
  } catch {
    return false; // not JSON any more: the file was rewritten
  }
}

/** The line of entry i is still there, whole, at its offset, and says the same id, parent, time and kind. */
export function entryAgrees(fd: number, c: EntryColumns, i: number, size: number): boolean {
  const offset = c.offset[i]!;
  const length = c.length[i]!;
  if (offset < 1 || offset + length + 1 > size) return false;
  const b = readAt(fd, offset - 1, offset + length + 1);
  if (b.length !== length + 2 || b[0] !== NL || b[b.length - 1] !== NL) return false;
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8', 1, b.length - 1));
  } catch {
    return false; // not the line that was indexed
  }
  return checkEntry(v) === null && sameEntry(c, i, v as SessionEntry);
}

/** The parsed entry is the one the index recorded at position i. */
export function sameEntry(c: EntryColumns, i: number, x: SessionEntry): boolean {
  return x.id === c.id(i) && x.parentId === c.parentId(i) && x.timestamp === c.timestamp(i) && kindOf(x) === c.kind[i];
}

/**
 * Cuts the index back to its longest prefix of entries whose lines still agree with the file (binary search:
 * a rewrite or truncation changes a suffix), so re-indexing reads only what changed.
 */
function cutToAgreement(s: IndexState, fd: number, size: number): void {
  const c = s.entries;
  let lo = -1;
  let hi = c.n;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (entryAgrees(fd, c, mid, size)) lo = mid;
    else hi = mid;
  }
  s.covered = lo >= 0 ? c.offset[lo]! + c.length[lo]! + 1 : s.headerEnd;
  s.lines = lo >= 0 ? c.line[lo]! : 1;
  c.truncate(lo + 1);
  s.problems = s.problems.filter((p) => p.line < s.lines);
}

function emptyState(path: string): IndexState {
  return { path, headerId: '', version: 0, headerEnd: 0, entries: new EntryColumns(), problems: [], covered: 0, lines: 0, size: 0, mtimeMs: 0, tailHash: '', unsupported: null };
}

interface Loaded {
  raw: Buffer;
  ino: number;
  validLength: number;
  state: IndexState;
}

function loadIndex(file: string, path: string): Loaded | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null; // no index yet (or an unreadable one): built from the file
  }
  try {
    const st = fstatSync(fd);
    const raw = readAt(fd, 0, st.size);
    const d = decodeIndex(raw);
    return d && d.state.path === path ? { raw, ino: st.ino, validLength: d.validLength, state: d.state } : null;
  } finally {
    closeSync(fd);
  }
}

/** The whole index in a new file. `toEntry`: the entries committed (a view may push an unterminated last line after them). */
async function rewriteIndex(file: string, s: IndexState, toEntry = s.entries.n): Promise<void> {
  await mkdirPrivate(dirname(file));
  const data = encodeBatch(s, { withMagic: true, withHeader: true, fromEntry: 0, toEntry, fromProblem: 0, prevCovered: 0 });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, data, { mode: PRIVATE_FILE });
  try {
    await rename(tmp, file); // a reader sees the old index or the new one
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/**
 * Appends one batch where the loaded index's last valid commit ends (dropping a torn batch after it). Only when the
 * file is still the one loaded: another process that wrote it meanwhile wins, and the next open catches up.
 */
async function appendIndex(file: string, loaded: Loaded, batch: Buffer): Promise<void> {
  await withFileLock(
    file,
    async () => {
      const fh = await open(file, 'r+');
      try {
        const st = await fh.stat();
        if (st.ino !== loaded.ino || st.size !== loaded.raw.length) return;
        if (loaded.validLength < st.size) await fh.truncate(loaded.validLength);
        await fh.write(batch, 0, batch.length, loaded.validLength);
      } finally {
        await fh.close();
      }
    },
    { timeoutMs: 2000 },
  ).catch((e: unknown) => {
    // The index is a cache: a busy lock only means this batch is indexed again by the next open.
    if (!(e instanceof SessyncError && e.code === 'locked')) throw e;
  });
}

export interface IndexOptions {
  /**
   * Keep the entries parsed while indexing (in `recent`) for the reads that follow, so they are not parsed twice
   * (default). A caller that reads only a few entries (resume: the model, thinking level and the count of messages)
   * says false: a first open then keeps nothing of what it parsed, which spares the collector copying it all.
   */
  keep?: boolean;
  /**
   * Write a rebuilt index after the caller's answer (before the process exits, see deferIndexWrite) instead of before
   * returning: a first open then answers at the cost of its parse. The state returned is the same either way.
   */
  defer?: boolean;
}

/**
 * The index of a session file, brought up to date and saved: as loaded when the file is unchanged; advanced over
 * the appended bytes when the indexed part still ends in the same bytes; otherwise cut back to where it still
 * agrees (or rebuilt) and re-indexed from there. `unsupported` set means: read this file whole.
 */
export async function sessionFileIndex(path: string, opts: IndexOptions = {}): Promise<IndexState> {
  const keep = opts.keep ?? true;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SessyncError('not_found', `session file ${path} does not exist`);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    const file = indexPath(path);
    const loaded = loadIndex(file, path);
    const s = loaded?.state;
    let tailAgrees = s !== undefined && s.covered <= st.size && tailHashAt(fd, s.covered) === s.tailHash;
    const unchanged = s !== undefined && s.size === st.size && s.mtimeMs === st.mtimeMs;
    // Changed: the last entry's line must still say what was indexed (ids sit at the start of a line, beyond the hashed bytes).
    if (s && tailAgrees && !unchanged && s.entries.n > 0 && !entryAgrees(fd, s.entries, s.entries.n - 1, st.size)) tailAgrees = false;
    if (s && tailAgrees && unchanged) {
      note('current', s.covered, s.covered);
      return s;
    }
    if (s && tailAgrees && s.unsupported === null && headerAgrees(fd, s, st.size)) {
      const mark = { fromEntry: s.entries.n, fromProblem: s.problems.length, prevCovered: s.covered };
      note('append', s.covered, st.size);
      indexLines(s, fd, st.size, keep);
      commit(s, fd, st);
      await appendIndex(file, loaded!, encodeBatch(s, { withMagic: false, withHeader: false, ...mark }));
      return s;
    }
    let fresh: IndexState;
    if (s && s.unsupported === null && headerAgrees(fd, s, st.size)) {
      cutToAgreement(s, fd, st.size);
      fresh = s;
      note('cut', s.covered, st.size);
    } else {
      fresh = emptyState(path);
      note('rebuild', 0, st.size);
    }
    // Most of what a first build parses stays live when it is kept (the entries, the id map): let the heap grow, as a full load does.
    if (keep) withBulkHeap(st.size - fresh.covered, () => indexLines(fresh, fd, st.size, keep));
    else indexLines(fresh, fd, st.size, keep);
    commit(fresh, fd, st);
    if (opts.defer) {
      const n = fresh.entries.n;
      deferIndexWrite(file, () => rewriteIndex(file, fresh, n));
    } else {
      dropIndexWrite(file); // an older state queued by this process must not land over this one
      await rewriteIndex(file, fresh);
    }
    return fresh;
  } finally {
    closeSync(fd);
  }
}

function commit(s: IndexState, fd: number, st: { size: number; mtimeMs: number }): void {
  s.size = st.size;
  s.mtimeMs = st.mtimeMs;
  s.tailHash = tailHashAt(fd, s.covered);
}
