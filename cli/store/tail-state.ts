// The sidecar cache that makes an append cost the same at 1,000 and 100,000 entries: tips and leaf of a file,
// checked against its size, mtime and last bytes, advanced by parsing only the bytes appended since (by anyone).
import { open } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { readJsonOrNull, writeJsonAtomic } from './atomic-json.js';
import type { FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { checkEntry, checkHeader } from '../../shared/entry.js';
import { parseJsonLine } from '../../shared/jsonl.js';
import type { SessionEntry } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { nullRecord, toNullRecord } from '../../shared/own-keys.js';
import { AGENT_LINE_TYPE } from '../../shared/agents/claude-code.js';
import { AGENTS } from '../../shared/agents/index.js';
import { cacheDir, cacheKey } from './paths.js';
import { saveCache } from './cache-save.js';

const FORMAT = 1;
/**
 * States that count the messages of agents' lines (mirror entries) carry this. One without it, from an older sessync,
 * counted none of them: a mirror's state said 0 messages.
 */
const COUNT_RULE = 2;
const TAIL_BYTES = 64;
const NL = 0x0a;

export interface TailState {
  format: number;
  path: string;
  /** File size and mtime the state was computed for. */
  size: number;
  mtimeMs: number;
  /** Hash of the last bytes before `size`: detects a file rewritten to a longer one. */
  tailHash: string;
  /** Bytes parsed so far: the end of the last complete line (a torn last line is not counted). */
  offset: number;
  headerId: string | null;
  version: number;
  /** Entries with no child so far: id -> timestamp. A null-prototype record: an entry may be called `constructor`. */
  tips: Record<string, string>;
  /** Parent ids that were not tips when referenced (branch points, not-yet-seen parents): an entry with such an id already has a child. */
  pending: string[];
  leafId: string | null;
  /** The last entry in file order: pi's leaf (pi takes the last line), which sync keeps equal to leafId. */
  lastId: string | null;
  /**
   * The newest time among the agents' lines (mirror entries) that have one (null: none has). What `list` shows when a
   * tip has no time (Claude Code ends its files with last-prompt lines, which have none), so it need not read back
   * through a long last line. Absent when not counted from the first entry (an older sessync's state, one built from a
   * session index's columns, which do not tell agents' lines apart): not known, and it stays so as the state advances.
   */
  newestTimedAt?: string | null;
  entryCount: number;
  /** Messages as pi counts them (its `message` entries); an agent's lines as that agent's countMessage says. */
  messageCount: number;
  /** The mark the last agent line counted left (Agent.countMessage): a response written as several lines counts once. */
  messageMark?: string;
  /** COUNT_RULE when the count includes agents' lines. */
  countRule?: number;
  name?: string;
  /** Lines after the header that did not parse or failed the structural check. */
  badLines: number;
}

/** Under the run's home (`env`): a run with its own SESSYNC_HOME keeps its caches there, not in process.env's. */
function statePath(path: string, env: NodeJS.ProcessEnv): string {
  return join(cacheDir('tail', env), `${cacheKey(path)}.json`);
}

function timeOf(ts: string): number {
  const t = Date.parse(ts);
  return Number.isNaN(t) ? -Infinity : t;
}

/** The leaf rule of SessionTree (shared/tree.ts), on tips: greatest time, then greater timestamp string, then greater id. */
export function tipBeats(aTs: string, aId: string, bTs: string, bId: string): boolean {
  const ta = timeOf(aTs);
  const tb = timeOf(bTs);
  if (ta !== tb) return ta > tb;
  if (aTs !== bTs) return aTs > bTs;
  return aId > bId;
}

export function pickLeaf(tips: Record<string, string>): string | null {
  let best: string | null = null;
  let bestTs = '';
  for (const id in tips) {
    const ts = tips[id]!;
    if (best === null || tipBeats(ts, id, bestTs, best)) {
      best = id;
      bestTs = ts;
    }
  }
  return best;
}

/** A cached state as read from disk, with its tips made a null-prototype record. */
function loaded(v: TailState | null, path: string): TailState | null {
  if (!v || v.format !== FORMAT || v.path !== path || typeof v.tips !== 'object' || v.tips === null) return null;
  // Saved before agents' lines were counted, with entries and no message: a mirror's, whose count said 0. Rebuilt
  // once from the file. A pi file's state with messages is kept (its count was right), so is one with no entries.
  if (v.countRule !== COUNT_RULE && v.messageCount === 0 && v.entryCount > 0) return null;
  // Null prototype: ids like `toString` or `__proto__` are entries, not Object.prototype's.
  return { ...v, tips: toNullRecord(v.tips) };
}

export function emptyState(path: string): TailState {
  return {
    format: FORMAT,
    path,
    size: 0,
    mtimeMs: 0,
    tailHash: '',
    offset: 0,
    headerId: null,
    version: 1,
    tips: nullRecord(),
    pending: [],
    leafId: null,
    lastId: null,
    newestTimedAt: null,
    entryCount: 0,
    messageCount: 0,
    countRule: COUNT_RULE,
    badLines: 0,
  };
}

/** A message count and the mark it carries from one entry to the next (a TailState is one). */
export interface MessageTally {
  messageCount: number;
  messageMark?: string;
}

/**
 * Counts one entry: a pi `message` entry is one message; an agent's line (a mirror entry) counts as that agent counts
 * its messages (Agent.countMessage), which reads the line's text, so pi's entries never pay for it.
 */
export function countMessage(t: MessageTally, e: SessionEntry): void {
  if (e.type === 'message') {
    t.messageCount++;
    return;
  }
  if (e.type !== AGENT_LINE_TYPE || typeof e.agent !== 'string' || !Object.hasOwn(AGENTS, e.agent) || typeof e.file !== 'string') return;
  // A synced line travels as its exact text; a shared (redacted) one as its value.
  const text = typeof e.line === 'string' ? e.line : typeof e.value === 'object' && e.value !== null ? JSON.stringify(e.value) : null;
  if (text === null) return;
  const r = AGENTS[e.agent as keyof typeof AGENTS].countMessage(text, e.file, t.messageMark ?? null);
  if (r.counts) t.messageCount++;
  if (r.mark === null) delete t.messageMark;
  else t.messageMark = r.mark;
}

/** The last newest time newerTime parsed, so a run of entries parses each time once, not the newest again each time. */
let parsedNewest: { ts: string; t: number } = { ts: '', t: NaN };

/** The newer of a known newest time and an entry's time (an unparsable or absent time leaves it as it is). */
export function newerTime(newest: string | null, ts: unknown): string | null {
  if (typeof ts !== 'string' || ts === newest) return newest;
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return newest;
  if (newest !== null) {
    if (parsedNewest.ts !== newest) parsedNewest = { ts: newest, t: Date.parse(newest) };
    if (parsedNewest.t >= t) return newest;
  }
  parsedNewest = { ts, t };
  return ts;
}

/** Adds one parsed entry to the tips (also used for entries just written). */
export function addEntry(state: TailState, e: SessionEntry, pending: Set<string>): void {
  if (e.type === AGENT_LINE_TYPE && state.newestTimedAt !== undefined) state.newestTimedAt = newerTime(state.newestTimedAt, e.timestamp);
  const p = e.parentId;
  if (p !== null) {
    if (Object.hasOwn(state.tips, p)) delete state.tips[p];
    else pending.add(p);
  }
  if (pending.has(e.id)) pending.delete(e.id); // something already names it as parent: not a tip
  else state.tips[e.id] = e.timestamp;
  state.lastId = e.id;
  state.entryCount++;
  countMessage(state, e);
  if (e.type === 'session_info' && typeof e.name === 'string') state.name = e.name;
}

/** Parses complete lines of buf (which starts at file byte `base`) into the state; stops before a torn last line. */
function consume(state: TailState, buf: Buffer, base: number): void {
  const pending = new Set(state.pending);
  let pos = 0;
  for (;;) {
    const nl = buf.indexOf(NL, pos);
    if (nl < 0) break;
    const start = base + pos;
    const text = buf.toString('utf8', pos, nl);
    pos = nl + 1;
    if (text.trim() === '') continue;
    // Several values on one line (two writers raced) count as the entries they are, as the reader loads them.
    const parsed = parseJsonLine(text);
    let values = parsed.values;
    state.badLines += parsed.errors.length;
    if (start === 0) {
      if (values.length === 0) throw new SessyncError('corrupt', `${state.path}: first line is not JSON, not a session file`);
      const why = checkHeader(values[0]);
      if (why) throw new SessyncError('corrupt', `${state.path}: ${why}`);
      const h = values[0] as { id: string; version?: number };
      state.headerId = h.id;
      state.version = h.version ?? 1;
      values = values.slice(1);
    }
    for (const v of values) {
      if (checkEntry(v) !== null) {
        state.badLines++;
        continue;
      }
      addEntry(state, v as SessionEntry, pending);
    }
  }
  state.offset = base + pos;
  state.pending = [...pending];
  state.leafId = pickLeaf(state.tips);
}

/**
 * What `entries`, written in this order after a header, make of a tail state: tips, leaf, last entry, counts, name.
 * Built from the entries in hand instead of parsing their lines back: the same state consume would find (an entry
 * that fails the structural check counts as a bad line there too). `checked`: every entry already passed checkEntry
 * (a pull's decode did), so it is not checked twice. Header, path, size, mtime and hash are set by stateOfWritten.
 */
export function stateOfEntries(entries: readonly SessionEntry[], o: { checked?: boolean } = {}): TailState {
  const state = emptyState('');
  addEntries(state, entries, o.checked === true);
  return state;
}

/**
 * stateOfEntries of one chain in file order (each entry's parent the entry before it, no id twice, the first's parent
 * not among them), the usual first pull of a session: the last entry is the only tip and the first's parent the only
 * pending id, so the tips record is not built entry by entry. Every entry must have passed checkEntry.
 */
export function stateOfChain(entries: readonly SessionEntry[]): TailState {
  const last = entries[entries.length - 1];
  if (last === undefined) return emptyState('');
  const tally: MessageTally = { messageCount: 0 };
  let name: string | undefined;
  let newest: string | null = null;
  for (const e of entries) {
    countMessage(tally, e);
    if (e.type === AGENT_LINE_TYPE) newest = newerTime(newest, e.timestamp);
    if (e.type === 'session_info' && typeof e.name === 'string') name = e.name;
  }
  const mark = tally.messageMark;
  return chainState({ root: entries[0]!.parentId, lastId: last.id, lastTimestamp: last.timestamp, entries: entries.length, messages: tally.messageCount, newestTimedAt: newest, ...(mark !== undefined ? { mark } : {}), ...(name !== undefined ? { name } : {}) });
}

/** What stateOfChain reads of a chain, for a caller that has its facts without the parsed entries (a scan of its lines). */
export interface ChainFacts {
  /** The first entry's parentId. */
  root: string | null;
  lastId: string;
  lastTimestamp: string;
  entries: number;
  /** Counted as countMessage counts them. */
  messages: number;
  /** The mark countMessage left after the last entry, if any. */
  mark?: string;
  /** The last session_info entry's name, if any has one. */
  name?: string;
  /** The newest time among the agents' lines (TailState.newestTimedAt); absent when not known. */
  newestTimedAt?: string | null;
}

/** stateOfChain from the chain's facts: the last entry the only tip, the first's parent the only pending id. */
export function chainState(c: ChainFacts): TailState {
  const state = emptyState('');
  if (c.root !== null) state.pending = [c.root];
  state.tips[c.lastId] = c.lastTimestamp;
  state.leafId = c.lastId;
  state.lastId = c.lastId;
  state.entryCount = c.entries;
  state.messageCount = c.messages;
  if (c.mark !== undefined) state.messageMark = c.mark;
  if (c.name !== undefined) state.name = c.name;
  if (c.newestTimedAt !== undefined) state.newestTimedAt = c.newestTimedAt;
  else delete state.newestTimedAt;
  return state;
}

/** The entries in hand added to the state in file order, as consume would add their lines. */
function addEntries(state: TailState, entries: readonly SessionEntry[], checked: boolean): void {
  const pending = new Set(state.pending);
  for (const e of entries) {
    if (!checked && checkEntry(e) !== null) state.badLines++; // as consume counts a line that is not an entry
    else addEntry(state, e, pending);
  }
  state.pending = [...pending];
  state.leafId = pickLeaf(state.tips);
}

/**
 * The state of a file just written whole as `data` (its header line, then the lines of the entries `entries` was
 * made of, by stateOfEntries), without reading it back. `mtimeMs`: the written file's.
 */
export function stateOfWritten(path: string, header: { id: string; version?: number }, entries: TailState, data: readonly Uint8Array[], mtimeMs: number): TailState {
  let size = 0;
  for (const d of data) size += d.byteLength;
  return { ...entries, path, headerId: header.id, version: header.version ?? 1, size, offset: size, mtimeMs, tailHash: hashOfLast(data) };
}

/** sha1 of the last TAIL_BYTES of the pieces' concatenation (what hashTail reads back from the file). */
function hashOfLast(data: readonly Uint8Array[]): string {
  const h = createHash('sha1');
  const tail: Uint8Array[] = [];
  let want = TAIL_BYTES;
  for (let i = data.length - 1; i >= 0 && want > 0; i--) {
    const d = data[i]!;
    const piece = d.subarray(Math.max(0, d.byteLength - want));
    tail.push(piece);
    want -= piece.byteLength;
  }
  for (let i = tail.length - 1; i >= 0; i--) h.update(tail[i]!);
  return h.digest('hex');
}

async function hashTail(fh: FileHandle, size: number): Promise<string> {
  const start = Math.max(0, size - TAIL_BYTES);
  const buf = Buffer.alloc(size - start);
  if (buf.length > 0) await fh.read(buf, 0, buf.length, start);
  return createHash('sha1').update(buf).digest('hex');
}

async function readRange(fh: FileHandle, start: number, end: number): Promise<Buffer> {
  const buf = Buffer.alloc(end - start);
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await fh.read(buf, done, buf.length - done, start + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

export async function peekTailState(path: string, env: NodeJS.ProcessEnv = process.env): Promise<TailState | null> {
  // A missing or unreadable cache only means a rebuild from the file.
  return loaded(await readJsonOrNull<TailState>(statePath(path, env)), path);
}

/** Sync peek for `list`, which reads thousands of these in a row. */
export function peekTailStateSync(path: string, env: NodeJS.ProcessEnv = process.env): TailState | null {
  let v: TailState;
  try {
    v = JSON.parse(readFileSync(statePath(path, env), 'utf8')) as TailState;
  } catch {
    return null; // no cache (yet): list shows no count for this file
  }
  return loaded(v, path);
}

/**
 * The state of an open session file: from the cache when it still describes the file's prefix, advanced over
 * the bytes appended since; rebuilt from the whole file when the file shrank or changed. `fh` must be readable.
 */
export async function tailStateOf(path: string, fh: FileHandle, env: NodeJS.ProcessEnv = process.env): Promise<TailState> {
  return (await stateOf(path, fh, env)).state;
}

/** tailStateOf, and whether the cache described the file as it is (nothing new to save). */
async function stateOf(path: string, fh: FileHandle, env: NodeJS.ProcessEnv): Promise<{ state: TailState; asCached: boolean }> {
  const st = await fh.stat();
  const cached = await peekTailState(path, env);
  // A cache from before lastId was recorded is rebuilt once (lastId cannot be derived from the tips).
  if (cached && cached.lastId !== undefined && cached.size <= st.size && cached.offset <= cached.size && (await hashTail(fh, cached.size)) === cached.tailHash) {
    if (cached.size === st.size && cached.mtimeMs === st.mtimeMs) return { state: cached, asCached: true };
    consume(cached, await readRange(fh, cached.offset, st.size), cached.offset);
    cached.size = st.size;
    cached.mtimeMs = st.mtimeMs;
    cached.tailHash = await hashTail(fh, st.size);
    return { state: cached, asCached: false };
  }
  const state = emptyState(path);
  consume(state, await readRange(fh, 0, st.size), 0);
  state.size = st.size;
  state.mtimeMs = st.mtimeMs;
  state.tailHash = await hashTail(fh, st.size);
  return { state, asCached: false };
}

/**
 * After appending `entries` as the lines `data` (under the file's lock) to a file whose state is `state`: the entries
 * are added as they are, without reading their lines back and parsing them again, when the file is exactly what the
 * state had parsed (no torn last line) followed by `data` (its size and its last bytes say so). Otherwise, another
 * writer appended too: what was appended since `state.offset` (ours included) is read and parsed.
 */
export async function advanceAppended(state: TailState, fh: FileHandle, entries: readonly SessionEntry[], data: Uint8Array): Promise<void> {
  const st = await fh.stat();
  const tailHash = await hashTail(fh, st.size);
  const ours = state.offset === state.size && st.size === state.size + data.byteLength && data.byteLength >= TAIL_BYTES && tailHash === hashOfLast([data]);
  if (ours) {
    addEntries(state, entries, false);
    state.offset = st.size;
  } else consume(state, await readRange(fh, state.offset, st.size), state.offset);
  state.size = st.size;
  state.mtimeMs = st.mtimeMs;
  state.tailHash = tailHash;
}

/** Saves the state atomically (temp + rename); a lost save only costs a later incremental parse. */
export async function saveTailState(state: TailState, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await writeJsonAtomic(statePath(state.path, env), state);
}

/** Convenience for readers outside a lock (list, resolve): the state of a file, cache saved (when it changed). */
export async function readTailState(path: string, env: NodeJS.ProcessEnv = process.env): Promise<TailState> {
  const fh = await open(path, 'r');
  try {
    const { state, asCached } = await stateOf(path, fh, env);
    if (!asCached) await saveCache('append', saveTailState(state, env)); // a reader: the cache must not fail it
    return state;
  } finally {
    await fh.close();
  }
}
