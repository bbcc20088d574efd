// The session index's bytes: a magic, then batches of records, each batch closed by a commit that a hash and the previous commit vouch for.
import { createHash } from 'node:crypto';
import type { Problem } from '../../shared/jsonl.js';

const MAGIC = Buffer.from('SSYNCIX1');
const TAG_HEADER = 1;
const TAG_ENTRY = 2;
const TAG_PROBLEM = 3;
const TAG_UNSUPPORTED = 4;
const TAG_COMMIT = 9;
const NULL_PARENT = 0xffff;
/** The parent is the entry record just before, in the same batch: a linear session stores each parent once. */
const PREV_PARENT = 0xfffe;
const HASH_BYTES = 8;

/** What the index knows of one entry line: enough for the tree, the leaf rule and the context plan, plus where to read it. */
export type IndexedEntry = {
  id: string;
  parentId: string | null;
  timestamp: string;
  /** Entry kind (ENTRY_KINDS), finer than `type` where the context projection needs it. */
  kind: number;
  /** Set from kind for SessionTree and the tail state; '' for types the index does not tell apart. */
  type: string;
  /** 1-based line number (counting the header), byte offset of the line and its length without the newline. */
  line: number;
  offset: number;
  length: number;
};

/** Kinds of entry. An assistant message naming its provider and model is apart: the context takes the model from the latest one. */
export const ENTRY_KINDS = [
  '', // a type this index does not tell apart
  'message',
  'message', // assistant message with provider and model strings
  'thinking_level_change',
  'model_change',
  'compaction',
  'branch_summary',
  'custom',
  'custom_message',
  'label',
  'session_info',
  'session_info', // with a name string
] as const;
export const KIND = { other: 0, message: 1, assistantModel: 2, thinking: 3, model: 4, compaction: 5, branchSummary: 6, custom: 7, customMessage: 8, label: 9, sessionInfo: 10, sessionName: 11 } as const;

export interface IndexState {
  /** The session file this index describes (a hash of it names the index file; kept to rule out a collision). */
  path: string;
  headerId: string;
  version: number;
  /** Bytes of the header line, its newline included. */
  headerEnd: number;
  entries: IndexedEntry[];
  /** Complete lines after the header that were not loaded, as the full reader reports them. */
  problems: Problem[];
  /** Bytes indexed: the end of the last complete line (its newline included). */
  covered: number;
  /** Lines counted up to `covered`. */
  lines: number;
  /** File size and mtime at the last commit. */
  size: number;
  mtimeMs: number;
  /** Hash of the (at most 64) bytes before `covered`: a rewrite of the indexed part shows there first. */
  tailHash: string;
  /** Why this file is read whole instead (a split line, an old format, no header at the start); null when the index serves it. */
  unsupported: string | null;
}

/** A growable byte buffer for encoding. */
class Out {
  buf = Buffer.allocUnsafe(1 << 16);
  n = 0;
  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }
  u8(v: number): void {
    this.room(1);
    this.buf[this.n++] = v;
  }
  u16(v: number): void {
    this.room(2);
    this.n = this.buf.writeUInt16LE(v, this.n);
  }
  u32(v: number): void {
    this.room(4);
    this.n = this.buf.writeUInt32LE(v, this.n);
  }
  f64(v: number): void {
    this.room(8);
    this.n = this.buf.writeDoubleLE(v, this.n);
  }
  bytes(b: Buffer): void {
    this.room(b.length);
    this.n += b.copy(this.buf, this.n);
  }
  /** A string of at most 65,533 UTF-8 bytes with a u16 length (longer ones are cut; the caller rules them out first). */
  str(s: string): void {
    const len = Buffer.byteLength(s);
    this.room(2 + len);
    this.n = this.buf.writeUInt16LE(len, this.n);
    this.n += this.buf.write(s, this.n, len, 'utf8');
  }
  done(): Buffer {
    return this.buf.subarray(0, this.n);
  }
}

/** The longest id, parent id or timestamp the format stores; a file with a longer one is read whole. */
export const MAX_FIELD_BYTES = 0xfff0;

function batchHash(buf: Buffer, start: number, end: number): Buffer {
  return createHash('sha1').update(buf.subarray(start, end)).digest().subarray(0, HASH_BYTES);
}

/**
 * One batch: the header record when `withHeader`, the entries from `fromEntry` and problems from `fromProblem`,
 * then a commit from `prevCovered` (the covered bytes the batch continues) to the state's. With `withMagic` it
 * starts a new index file.
 */
export function encodeBatch(s: IndexState, opts: { withMagic: boolean; withHeader: boolean; fromEntry: number; fromProblem: number; prevCovered: number }): Buffer {
  const o = new Out();
  if (opts.withMagic) o.bytes(MAGIC);
  const start = o.n;
  if (opts.withHeader) {
    o.u8(TAG_HEADER);
    o.str(s.path);
    o.str(s.headerId);
    o.u32(s.version);
    o.f64(s.headerEnd);
  }
  if (s.unsupported !== null) {
    o.u8(TAG_UNSUPPORTED);
    o.str(s.unsupported.slice(0, 1000));
  }
  let prevId: string | null = null;
  for (let i = opts.fromEntry; i < s.entries.length; i++) {
    const e = s.entries[i]!;
    o.u8(TAG_ENTRY);
    o.u8(e.kind);
    o.u32(e.line);
    o.f64(e.offset);
    o.u32(e.length);
    o.str(e.id);
    if (e.parentId === null) o.u16(NULL_PARENT);
    else if (e.parentId === prevId) o.u16(PREV_PARENT);
    else o.str(e.parentId);
    o.str(e.timestamp);
    prevId = e.id;
  }
  for (let i = opts.fromProblem; i < s.problems.length; i++) {
    o.u8(TAG_PROBLEM);
    o.u32(s.problems[i]!.line);
    o.str(s.problems[i]!.reason);
  }
  o.u8(TAG_COMMIT);
  o.f64(opts.prevCovered);
  o.f64(s.covered);
  o.u32(s.lines);
  o.f64(s.size);
  o.f64(s.mtimeMs);
  o.bytes(Buffer.from(s.tailHash, 'hex'));
  const buf = o.done();
  const h = batchHash(buf, start, buf.length);
  const out = Buffer.allocUnsafe(buf.length + HASH_BYTES);
  buf.copy(out);
  h.copy(out, buf.length);
  return out;
}

/** Thrown inside decode for bytes that end mid-record: the batch is torn. */
class Torn extends Error {}

class In {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
  ) {
    this.pos = start;
  }
  private need(k: number): void {
    if (this.pos + k > this.buf.length) throw new Torn();
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16LE(this.pos);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }
  strOfLength(len: number): string {
    this.need(len);
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }
  str(): string {
    return this.strOfLength(this.u16());
  }
}

export interface Decoded {
  state: IndexState;
  /** Bytes of the index file up to the end of its last valid commit: anything after is a torn or foreign write. */
  validLength: number;
}

/**
 * The index as of its last commit that verifies: its batch hash matches and it continues the commit before it.
 * A torn batch (a writer killed mid-write) or any damage ends the index there. null when not even one batch verifies.
 */
export function decodeIndex(buf: Buffer): Decoded | null {
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  let state: IndexState | null = null;
  let validLength = 0;
  const r = new In(buf, MAGIC.length);
  try {
    for (;;) {
      if (r.pos === buf.length) break;
      const start = r.pos;
      const entries: IndexedEntry[] = [];
      const problems: Problem[] = [];
      let header: Pick<IndexState, 'path' | 'headerId' | 'version' | 'headerEnd'> | null = null;
      let unsupported: string | null = null;
      let prevId: string | null = null;
      let tag = r.u8();
      for (; tag !== TAG_COMMIT; tag = r.u8()) {
        if (tag === TAG_ENTRY) {
          const kind = r.u8();
          const line = r.u32();
          const offset = r.f64();
          const length = r.u32();
          const id = r.str();
          const p = r.u16();
          const parentId = p === NULL_PARENT ? null : p === PREV_PARENT ? prevId : r.strOfLength(p);
          const timestamp = r.str();
          entries.push({ id, parentId, timestamp, kind, type: ENTRY_KINDS[kind] ?? '', line, offset, length });
          prevId = id;
        } else if (tag === TAG_PROBLEM) {
          problems.push({ line: r.u32(), reason: r.str() });
        } else if (tag === TAG_HEADER) {
          header = { path: r.str(), headerId: r.str(), version: r.u32(), headerEnd: r.f64() };
        } else if (tag === TAG_UNSUPPORTED) {
          unsupported = r.str();
        } else {
          return state && { state, validLength }; // an unknown tag: not a record this format wrote
        }
      }
      const prevCovered = r.f64();
      const covered = r.f64();
      const lines = r.u32();
      const size = r.f64();
      const mtimeMs = r.f64();
      const tailStart = r.pos;
      r.pos += 20;
      if (r.pos + HASH_BYTES > buf.length) break;
      const tailHash = buf.toString('hex', tailStart, tailStart + 20);
      if (!batchHash(buf, start, r.pos).equals(buf.subarray(r.pos, r.pos + HASH_BYTES))) break;
      r.pos += HASH_BYTES;
      if (state === null) {
        if (header === null || prevCovered !== 0) break;
        state = { ...header, entries, problems, covered, lines, size, mtimeMs, tailHash, unsupported };
      } else {
        if (header !== null || prevCovered !== state.covered || covered < state.covered) break; // not a continuation of this index
        for (const e of entries) state.entries.push(e);
        for (const p of problems) state.problems.push(p);
        Object.assign(state, { covered, lines, size, mtimeMs, tailHash, unsupported: unsupported ?? state.unsupported });
      }
      validLength = r.pos;
    }
  } catch (e) {
    if (!(e instanceof Torn)) throw e;
    // A batch cut off mid-record: everything before it stands, as validLength says.
  }
  return state && { state, validLength };
}
