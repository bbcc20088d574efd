// The per-session index: built once, advanced over the bytes appended since (by anyone), re-indexed from where a changed file still agrees.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CURRENT_VERSION, checkEntry, checkHeader, type SessionEntry } from '../../shared/entry.js';
import { splitJsonValues } from '../../shared/jsonl.js';
import { SessyncError } from '../../shared/errors.js';
import { decodeIndex, encodeBatch, EntryColumns, KIND, MAX_FIELD_BYTES, NO_PARENT, OTHER_PARENT, type IndexState } from './session-file-index-codec.js';
import { withFileLock } from './file-lock.js';
import { withBulkHeap } from './parse-file.js';
import { cacheDir, cacheKey } from './paths.js';
import { PRIVATE_FILE, mkdirPrivate } from './private-fs.js';

export type { IndexState } from './session-file-index-codec.js';

const NL = 0x0a;
const READ_BYTES = 1 << 20;
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

function fieldsFit(e: SessionEntry): boolean {
  const long = (s: string) => s.length * 3 > MAX_FIELD_BYTES && Buffer.byteLength(s) > MAX_FIELD_BYTES;
  return !long(e.id) && !long(e.timestamp) && (e.parentId === null || !long(e.parentId));
}

/** One complete line (bytes [start, end) of `bytes`, which starts at file byte `base`), judged as the full reader judges it. */
function indexLine(s: IndexState, bytes: Buffer, start: number, end: number, base: number): void {
  const line = ++s.lines;
  const offset = base + start;
  const text = decode(bytes, start, end);
  if (offset === 0) {
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
      s.headerEnd = end + 1;
      if (s.version < CURRENT_VERSION) s.unsupported = `format version ${s.version}`;
    }
    return;
  }
  if (isBlank(text)) return;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    if (splitJsonValues(text) !== null) s.unsupported = `line ${line} holds several JSON values`;
    else s.problems.push({ line, reason: clip(`invalid JSON: ${errText(err)}`) });
    return;
  }
  const why = checkEntry(v);
  if (why !== null) {
    s.problems.push({ line, reason: clip(why) });
    return;
  }
  const e = v as SessionEntry;
  if (!fieldsFit(e)) {
    s.unsupported = `line ${line} has an id or timestamp too long to index`;
    return;
  }
  const c = s.entries;
  // Two lines with one id, or a parent written after its child: rare, and the full reader's to judge (and word).
  if (c.find(e.id) >= 0) {
    s.unsupported = `line ${line} repeats the id ${e.id}`;
    return;
  }
  for (const t of c.parentText.values()) {
    if (t === e.id) {
      s.unsupported = `line ${line} is the parent of an earlier line`;
      return;
    }
  }
  const p = e.parentId;
  let parent: number = NO_PARENT;
  if (p !== null) parent = c.n > 0 && c.id(c.n - 1) === p ? c.n - 1 : c.find(p);
  if (parent === -1 && p !== null) parent = OTHER_PARENT;
  c.push(e.id, parent, parent === OTHER_PARENT ? p : null, e.timestamp, kindOf(e), line, offset, end - start);
  keepRecent(s, c.n - 1, e);
}

/**
 * Line bytes of parsed entries kept for the reads after indexing (the context is read from the end of a session,
 * so the newest are kept): a first open of a 100 MB session parses each line once, a larger one keeps its last 128 MB.
 */
const RECENT_BYTES = 128 << 20;
let recentBytes = 0;
/** The oldest position still kept (positions are kept in order, so the budget drops them from the front). */
let recentFrom = 0;

function keepRecent(s: IndexState, i: number, e: SessionEntry): void {
  const kept = (s.recent ??= []);
  kept[i] = e;
  recentBytes += s.entries.length[i]!;
  for (; recentBytes > RECENT_BYTES && recentFrom < i; recentFrom++) {
    if (kept[recentFrom] === undefined) continue;
    kept[recentFrom] = undefined;
    recentBytes -= s.entries.length[recentFrom]!;
  }
}

/** Indexes the complete lines from s.covered up to byte `to`; a last line without its newline is left for the reader. */
function indexLines(s: IndexState, fd: number, to: number): void {
  s.recent = [];
  recentBytes = 0;
  recentFrom = s.entries.n;
  if (s.entries.n === 0) s.entries.byId ??= new Map(); // a fresh build looks up every parent: keep the map from the start
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
      indexLine(s, joined, 0, joined.length - 1, carryStart);
      s.covered = carryStart + joined.length;
      from = nl + 1;
    }
    for (let nl = chunk.indexOf(NL, from); nl >= 0 && s.unsupported === null; nl = chunk.indexOf(NL, from)) {
      indexLine(s, chunk, from, nl, base);
      from = nl + 1;
      s.covered = base + from;
    }
    if (from < chunk.length) {
      carry.push(Buffer.from(chunk.subarray(from)));
      carryStart = base + from;
    }
  }
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

async function rewriteIndex(file: string, s: IndexState): Promise<void> {
  await mkdirPrivate(dirname(file));
  const data = encodeBatch(s, { withMagic: true, withHeader: true, fromEntry: 0, fromProblem: 0, prevCovered: 0 });
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

/**
 * The index of a session file, brought up to date and saved: as loaded when the file is unchanged; advanced over
 * the appended bytes when the indexed part still ends in the same bytes; otherwise cut back to where it still
 * agrees (or rebuilt) and re-indexed from there. `unsupported` set means: read this file whole.
 */
export async function sessionFileIndex(path: string): Promise<IndexState> {
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
      indexLines(s, fd, st.size);
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
    // Most of what a first build parses stays live (the kept entries, the id map): let the heap grow, as a full load does.
    withBulkHeap(st.size - fresh.covered, () => indexLines(fresh, fd, st.size));
    commit(fresh, fd, st);
    await rewriteIndex(file, fresh);
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
