// The session index's bytes and columns: a magic, then batches of entry records, each batch closed by a commit that a hash and the previous commit vouch for.
import { createHash } from 'node:crypto';
import type { Problem } from '../../shared/jsonl.js';

const MAGIC = Buffer.from('SSYNCIX2');
const TAG_HEADER = 1;
const TAG_ENTRY = 2;
const TAG_PROBLEM = 3;
const TAG_UNSUPPORTED = 4;
const TAG_COMMIT = 9;
const HASH_BYTES = 8;
/** Entry flags: the parent id is not an earlier entry (stored as text); the timestamp is not the canonical ISO form of its time. */
const F_PARENT_TEXT = 1;
const F_TS_TEXT = 2;

/** Parent column: no parent; a parent id that names no earlier entry (kept as text in `parentText`). */
export const NO_PARENT = -1;
export const OTHER_PARENT = -2;

/** Kinds of entry. An assistant message naming its provider and model is apart: the context takes the model from the latest one. */
export const KIND = { other: 0, message: 1, assistantModel: 2, thinking: 3, model: 4, compaction: 5, branchSummary: 6, custom: 7, customMessage: 8, label: 9, sessionInfo: 10, sessionName: 11 } as const;
/** The entry type of each kind ('' for types the index does not tell apart). */
export const KIND_TYPES = ['', 'message', 'message', 'thinking_level_change', 'model_change', 'compaction', 'branch_summary', 'custom', 'custom_message', 'label', 'session_info', 'session_info'] as const;

/**
 * Entries as columns (one typed array per field): loading a million entries makes no object per entry, and
 * ids become strings only for the entries a command touches.
 */
export class EntryColumns {
  n = 0;
  offset: Float64Array;
  length: Uint32Array;
  line: Uint32Array;
  /** Position of the parent entry, or NO_PARENT / OTHER_PARENT. */
  parent: Int32Array;
  kind: Uint8Array;
  /** Date.parse of the timestamp (NaN when it does not parse). */
  ms: Float64Array;
  idHash: Uint32Array;
  /** Ids made into strings so far (a cache: every id also lies as bytes in `raw` or `own`, see idAt). */
  ids: (string | undefined)[] = [];
  /**
   * Where entry i's id lies, as a 2-byte length and its UTF-8 bytes: at idAt[i] in `raw` (the loaded index) when it is
   * 0 or more, else at -idAt[i] - 1 in `own` (pushed entries). Pushed ids are kept as bytes, not as the strings the
   * parse made: a first build of a million entries would otherwise keep a million young strings alive, and every
   * collection during the build would copy them.
   */
  idAt: Float64Array;
  raw: Buffer | null = null;
  private own: Buffer = Buffer.allocUnsafe(1 << 16);
  private ownN = 0;
  /** The id of the entry pushed last (null after a truncate or a decode): a new entry's parent, most of the time. */
  lastId: string | null = null;
  parentText = new Map<number, string>();
  tsText = new Map<number, string>();
  /**
   * Position by id: an open-addressing table of 1 << slotBits slots, each two ints: position + 1 (0 empty) and the
   * id's hash, so a probe compares hashes within the slot it reads (a build's probes land at random in a table
   * larger than the CPU caches). Made when lookups by scanning would add up (a fresh build makes it from the start).
   * Typed, not a Map: no string hashing or map entry per id, and it is rebuilt from the hash column without decoding
   * a single id.
   */
  private slots: Int32Array | null = null;
  private slotBits = 0;
  private scans = 0;
  /**
   * pushNew does not look for a repeated id; firstRepeat finds them all at once afterwards. A fresh build sets it:
   * probing the id table for every entry costs a cache miss each, and a linear session looks up no parent by id
   * (each is the entry just before), so the table is not even made.
   */
  deferRepeats = false;

  constructor(capacity = 64) {
    const n = Math.max(64, capacity);
    this.offset = new Float64Array(n);
    this.length = new Uint32Array(n);
    this.line = new Uint32Array(n);
    this.parent = new Int32Array(n);
    this.kind = new Uint8Array(n);
    this.ms = new Float64Array(n);
    this.idHash = new Uint32Array(n);
    this.idAt = new Float64Array(n);
  }

  private grow(): void {
    const cap = this.offset.length * 2;
    const more = <T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(cap);
      b.set(a);
      return b;
    };
    this.offset = more(this.offset);
    this.length = more(this.length);
    this.line = more(this.line);
    this.parent = more(this.parent);
    this.kind = more(this.kind);
    this.ms = more(this.ms);
    this.idHash = more(this.idHash);
    this.idAt = more(this.idAt);
  }

  /** A new row whose fields the caller sets (the decoder, which makes no strings). */
  reserve(): number {
    if (this.n === this.offset.length) this.grow();
    this.slots = null; // its hash is set after this: the table is made again on the next lookup
    this.lastId = null;
    return this.n++;
  }

  /** `ms`: canonicalIsoMs(timestamp), when the caller has it already. */
  push(id: string, parent: number, parentText: string | null, timestamp: string, kind: number, line: number, offset: number, length: number, idHash = hashId(id), ms = canonicalIsoMs(timestamp)): void {
    if (this.n === this.offset.length) this.grow();
    const i = this.n++;
    this.offset[i] = offset;
    this.length[i] = length;
    this.line[i] = line;
    this.parent[i] = parent;
    this.kind[i] = kind;
    if (Number.isNaN(ms)) {
      ms = Date.parse(timestamp);
      if (!(Number.isFinite(ms) && new Date(ms).toISOString() === timestamp)) this.tsText.set(i, timestamp);
    }
    this.ms[i] = ms;
    this.idHash[i] = idHash;
    if (id.length * 3 <= 0xffff) this.idAt[i] = -this.keepId(id) - 1;
    else {
      // Maybe longer than a 2-byte length holds: only an unterminated last line can be (the index stores no such
      // entry, see MAX_FIELD_BYTES), and it stays the string.
      this.ids[i] = id;
      this.idAt[i] = -this.keepId('') - 1;
    }
    this.lastId = id;
    if (parentText !== null) this.parentText.set(i, parentText);
    if (this.slots !== null) {
      if (this.n * 2 > 1 << this.slotBits) this.indexIds();
      else this.slot(i);
    }
  }

  /**
   * push, unless an entry with this id is there already: then nothing is added and its position is returned (else -1).
   * With the id table made, the lookup and the insertion are one probe sequence.
   */
  pushNew(id: string, parent: number, parentText: string | null, timestamp: string, kind: number, line: number, offset: number, length: number, idHash: number, ms = canonicalIsoMs(timestamp)): number {
    if (this.deferRepeats) {
      this.push(id, parent, parentText, timestamp, kind, line, offset, length, idHash, ms);
      return -1;
    }
    if (this.slots === null) {
      const at = this.find(id, idHash);
      if (at < 0) this.push(id, parent, parentText, timestamp, kind, line, offset, length, idHash, ms);
      return at;
    }
    if ((this.n + 1) * 2 > 1 << this.slotBits) this.indexIds();
    const found = this.probe(id, idHash);
    if (found >= 0) return found;
    const k = -found - 1;
    const slots = this.slots;
    const i = this.n;
    this.slots = null; // push adds no slot of its own: this one is set here, where the probe ended
    this.push(id, parent, parentText, timestamp, kind, line, offset, length, idHash, ms);
    this.slots = slots;
    slots[2 * k] = i + 1;
    slots[2 * k + 1] = idHash;
    return -1;
  }

  /**
   * The first position whose id an earlier entry has, or -1: one sort of the hash column, and ids compared only for
   * hashes that repeat.
   */
  firstRepeat(): number {
    const sorted = this.idHash.slice(0, this.n).sort();
    let repeated: Set<number> | null = null;
    for (let k = 1; k < sorted.length; k++) if (sorted[k] === sorted[k - 1]) (repeated ??= new Set()).add(sorted[k]!);
    if (repeated === null) return -1;
    if (repeated.size <= FEW_REPEATS) {
      // A few hashes repeat (a chance collision, 32 bits over many ids): their positions by the column's own search,
      // which costs less than one more pass over every entry in script.
      let first = -1;
      const hashes = this.idHash.subarray(0, this.n);
      for (const h of repeated) {
        const at: number[] = [];
        for (let j = hashes.indexOf(h); j >= 0 && (first < 0 || j < first); j = hashes.indexOf(h, j + 1)) {
          if (at.some((i) => this.idIs(i, this.id(j)))) {
            first = j;
            break;
          }
          at.push(j);
        }
      }
      return first;
    }
    const seen = new Map<number, number[]>();
    for (let j = 0; j < this.n; j++) {
      const h = this.idHash[j]!;
      if (!repeated.has(h)) continue;
      const earlier = seen.get(h);
      if (earlier === undefined) seen.set(h, [j]);
      else if (earlier.some((i) => this.idIs(i, this.id(j)))) return j;
      else earlier.push(j);
    }
    return -1;
  }

  /** Makes the id table now (sized for twice the entries, so probes stay short). */
  indexIds(): void {
    let bits = 7;
    while (1 << bits < this.n * 4) bits++;
    this.slotBits = bits;
    this.slots = new Int32Array(2 << bits);
    for (let i = 0; i < this.n; i++) this.slot(i);
  }

  private slot(i: number): void {
    const slots = this.slots!;
    const mask = (1 << this.slotBits) - 1;
    const h = this.idHash[i]!;
    let k = Math.imul(h, 0x9e3779b1) >>> (32 - this.slotBits);
    while (slots[2 * k] !== 0) k = (k + 1) & mask;
    slots[2 * k] = i + 1;
    slots[2 * k + 1] = h;
  }

  /** In the id table: the position of the entry with this id, else -(k + 1) for the empty slot k where the probe ended. */
  private probe(id: string, h: number): number {
    const slots = this.slots!;
    const mask = (1 << this.slotBits) - 1;
    const stored = h | 0; // as the Int32Array gives it back
    for (let k = Math.imul(h, 0x9e3779b1) >>> (32 - this.slotBits); ; k = (k + 1) & mask) {
      const at = slots[2 * k]!;
      if (at === 0) return -k - 1;
      if (slots[2 * k + 1] === stored && this.idIs(at - 1, id)) return at - 1;
    }
  }

  /** The position of the entry with this id, or -1. A few lookups scan the hash column; more build the id table once. */
  find(id: string, h = hashId(id)): number {
    if (this.slots === null && this.scans++ >= 32) this.indexIds();
    if (this.slots !== null) return Math.max(-1, this.probe(id, h));
    for (let j = this.n - 1; j >= 0; j--) if (this.idHash[j] === h && this.idIs(j, id)) return j;
    return -1;
  }

  /** Stores an id's bytes in `own`; returns where. */
  private keepId(id: string): number {
    const max = 2 + id.length * 3;
    if (this.ownN + max > this.own.length) {
      const next = Buffer.allocUnsafe(Math.max(this.own.length * 2, this.ownN + max));
      this.own.copy(next, 0, 0, this.ownN);
      this.own = next;
    }
    const b = this.own;
    const at = this.ownN;
    let k = 0;
    // Ids are ASCII in practice: copied by hand (a Buffer.write costs more than the loop for 36 characters).
    for (; k < id.length; k++) {
      const c = id.charCodeAt(k);
      if (c >= 0x80) break;
      b[at + 2 + k] = c;
    }
    const len = k === id.length ? k : b.write(id, at + 2, 'utf8');
    b[at] = len & 0xff;
    b[at + 1] = len >>> 8;
    this.ownN = at + 2 + len;
    return at;
  }

  /** The buffer that holds entry i's id (its 2-byte length first, at idPos(i)). */
  idBuf(i: number): Buffer {
    return this.idAt[i]! >= 0 ? this.raw! : this.own;
  }

  idPos(i: number): number {
    const at = this.idAt[i]!;
    return at >= 0 ? at : -at - 1;
  }

  id(i: number): string {
    let s = this.ids[i];
    if (s === undefined) {
      const b = this.idBuf(i);
      const at = this.idPos(i);
      s = b.toString('utf8', at + 2, at + 2 + (b[at]! | (b[at + 1]! << 8)));
      this.ids[i] = s;
    }
    return s;
  }

  /** id(i) === s, on the stored bytes when s is ASCII: a lookup makes no string. */
  idIs(i: number, s: string): boolean {
    const cached = this.ids[i];
    if (cached !== undefined) return cached === s;
    const b = this.idBuf(i);
    const at = this.idPos(i);
    const len = b[at]! | (b[at + 1]! << 8);
    if (len < s.length) return false; // UTF-8 takes at least one byte per UTF-16 unit
    for (let k = 0; k < s.length; k++) {
      const c = s.charCodeAt(k);
      if (c >= 0x80) return this.id(i) === s;
      if (b[at + 2 + k] !== c) return false;
    }
    return len === s.length;
  }

  parentId(i: number): string | null {
    const p = this.parent[i]!;
    return p >= 0 ? this.id(p) : p === NO_PARENT ? null : this.parentText.get(i)!;
  }

  timestamp(i: number): string {
    return this.tsText.get(i) ?? new Date(this.ms[i]!).toISOString();
  }

  /** Drops entries from position n on (a file cut back to where it still agrees). */
  truncate(n: number): void {
    this.n = n;
    this.slots = null;
    this.lastId = null;
    this.ids.length = Math.min(this.ids.length, n);
    for (const m of [this.parentText, this.tsText]) for (const k of [...m.keys()]) if (k >= n) m.delete(k);
  }
}

/** Up to this many repeated hashes, firstRepeat finds their positions one hash at a time. */
const FEW_REPEATS = 16;

/** Digits of `s` from `at` to `at + n` as a number, or -1 when one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let k = at; k < at + n; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The time of a timestamp written exactly as toISOString writes it (YYYY-MM-DDTHH:MM:SS.mmmZ, years 1000-9999), read
 * from its digits; NaN for any other text (the caller then asks Date.parse). Spares a Date and a string per entry.
 */
export function canonicalIsoMs(t: string): number {
  if (t.length !== 24 || t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45 || t.charCodeAt(10) !== 84 || t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58 || t.charCodeAt(19) !== 46 || t.charCodeAt(23) !== 90) return NaN;
  const y = digits(t, 0, 4);
  const mo = digits(t, 5, 2);
  const d = digits(t, 8, 2);
  const h = digits(t, 11, 2);
  const mi = digits(t, 14, 2);
  const sec = digits(t, 17, 2);
  const ms = digits(t, 20, 3);
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || d > DAYS[mo - 1]! || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0) return NaN;
  if (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return NaN;
  return daysFromCivil(y, mo, d) * 86_400_000 + ((h * 60 + mi) * 60 + sec) * 1000 + ms;
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (years 1000 and on here), by H. Hinnant's
 * days_from_civil: integer arithmetic, where Date.UTC is a call into the runtime for each of a build's entries.
 */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** FNV-1a over the UTF-16 code units: finds a repeated id among a million without making their strings. */
export function hashId(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** hashId(s) when every character of s is ASCII, else -1 (one pass for both). */
export function hashAsciiId(s: string): number {
  let h = 0x811c9dc5;
  let all = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    all |= c;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return all < 0x80 ? h >>> 0 : -1;
}

export interface IndexState {
  /** The session file this index describes (a hash of it names the index file; kept to rule out a collision). */
  path: string;
  headerId: string;
  version: number;
  /** Bytes of the header line, its newline included. */
  headerEnd: number;
  entries: EntryColumns;
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
  /** Why this file is read whole instead (a split line, an old format, a repeated id...); null when the index serves it. */
  unsupported: string | null;
  /**
   * Entries this process just parsed while indexing, by position (the most recent ones, up to a byte budget), so the
   * reads that follow a first open take them instead of parsing their lines again. Never saved.
   */
  recent?: (unknown | undefined)[];
}

/** The longest id, parent id or timestamp the format stores; a file with a longer one is read whole. */
export const MAX_FIELD_BYTES = 0xfff0;

/** Scratch for one little-endian double (as the reader's readDoubleLE expects), whatever the platform's order. */
const F64_BYTES = new Uint8Array(8);
const F64 = new DataView(F64_BYTES.buffer);

/** A growable byte buffer for encoding. */
class Out {
  buf = Buffer.allocUnsafe(1 << 16);
  n = 0;
  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }
  u8(v: number): void {
    this.room(1);
    this.buf[this.n++] = v;
  }
  // Byte stores rather than Buffer's write*LE (range checks per call): an index write covers every entry.
  u32(v: number): void {
    this.room(4);
    const b = this.buf;
    const n = this.n;
    b[n] = v;
    b[n + 1] = v >>> 8;
    b[n + 2] = v >>> 16;
    b[n + 3] = v >>> 24;
    this.n = n + 4;
  }
  i32(v: number): void {
    this.u32(v >>> 0);
  }
  f64(v: number): void {
    this.room(8);
    F64.setFloat64(0, v, true);
    this.buf.set(F64_BYTES, this.n);
    this.n += 8;
  }
  bytes(b: Buffer): void {
    this.room(b.length);
    this.n += b.copy(this.buf, this.n);
  }
  /** A 2-byte length and that many bytes, copied from `b` at `at` (as str writes them). */
  lengthAndBytes(b: Buffer, at: number): void {
    const len = 2 + (b[at]! | (b[at + 1]! << 8));
    this.room(len);
    this.n += b.copy(this.buf, this.n, at, at + len);
  }
  str(s: string): void {
    const len = Buffer.byteLength(s);
    this.room(2 + len);
    this.n = this.buf.writeUInt16LE(len, this.n);
    this.n += this.buf.write(s, this.n, len, 'utf8');
  }
}

function batchHash(buf: Buffer, start: number, end: number): Buffer {
  return createHash('sha1').update(buf.subarray(start, end)).digest().subarray(0, HASH_BYTES);
}

/**
 * One batch: the header record when `withHeader`, the entries from `fromEntry` (to `toEntry`, default all) and problems from `fromProblem`,
 * then a commit from `prevCovered` (the covered bytes the batch continues) to the state's. With `withMagic` it
 * starts a new index file.
 */
export function encodeBatch(s: IndexState, opts: { withMagic: boolean; withHeader: boolean; fromEntry: number; toEntry?: number; fromProblem: number; prevCovered: number }): Buffer {
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
  const c = s.entries;
  const to = opts.toEntry ?? c.n;
  for (let i = opts.fromEntry; i < to; i++) {
    const pText = c.parentText.get(i);
    const tText = c.tsText.get(i);
    o.u8(TAG_ENTRY);
    o.u8(c.kind[i]!);
    o.u32(c.line[i]!);
    o.f64(c.offset[i]!);
    o.u32(c.length[i]!);
    o.i32(c.parent[i]!);
    o.f64(c.ms[i]!);
    o.u32(c.idHash[i]!);
    o.lengthAndBytes(c.idBuf(i), c.idPos(i));
    o.u8((pText !== undefined ? F_PARENT_TEXT : 0) | (tText !== undefined ? F_TS_TEXT : 0));
    if (pText !== undefined) o.str(pText);
    if (tText !== undefined) o.str(tText);
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
  o.bytes(batchHash(o.buf, start, o.n));
  return o.buf.subarray(0, o.n);
}

/** Thrown inside decode for bytes that end mid-record: the batch is torn. */
class Torn extends Error {}

export interface Decoded {
  state: IndexState;
  /** Bytes of the index file up to the end of its last valid commit: anything after is a torn or foreign write. */
  validLength: number;
}

/**
 * The index as of its last commit that verifies: its batch hash matches and it continues the commit before it.
 * A torn batch (a writer killed mid-write) or any damage ends the index there. null when not even one batch
 * verifies. Ids are not decoded: the columns keep where each one is in `buf`.
 */
export function decodeIndex(buf: Buffer): Decoded | null {
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  let state: IndexState | null = null;
  let validLength = 0;
  const cols = new EntryColumns(Math.ceil(buf.length / 60)); // an entry record takes about 60 bytes or more: no regrowth
  cols.raw = buf;
  let pos = MAGIC.length;
  let committed = 0;
  // DataView reads compile to plain loads; Buffer's readDoubleLE assembles each number byte by byte.
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const need = (k: number) => {
    if (pos + k > buf.length) throw new Torn();
  };
  const str = (): string => {
    need(2);
    const len = buf.readUInt16LE(pos);
    need(2 + len);
    const s = buf.toString('utf8', pos + 2, pos + 2 + len);
    pos += 2 + len;
    return s;
  };
  try {
    while (pos < buf.length) {
      const start = pos;
      const problems: Problem[] = [];
      let header: Pick<IndexState, 'path' | 'headerId' | 'version' | 'headerEnd'> | null = null;
      let unsupported: string | null = null;
      for (;;) {
        need(1);
        const tag = buf[pos++]!;
        if (tag === TAG_COMMIT) break;
        if (tag === TAG_ENTRY) {
          need(33 + 2);
          const i = cols.reserve();
          cols.kind[i] = buf[pos]!;
          cols.line[i] = dv.getUint32(pos + 1, true);
          cols.offset[i] = dv.getFloat64(pos + 5, true);
          cols.length[i] = dv.getUint32(pos + 13, true);
          cols.parent[i] = dv.getInt32(pos + 17, true);
          cols.ms[i] = dv.getFloat64(pos + 21, true);
          cols.idHash[i] = dv.getUint32(pos + 29, true);
          pos += 33;
          cols.idAt[i] = pos;
          need(2);
          pos += 2 + dv.getUint16(pos, true);
          need(1);
          const flags = buf[pos++]!;
          if (flags & F_PARENT_TEXT) cols.parentText.set(i, str());
          if (flags & F_TS_TEXT) cols.tsText.set(i, str());
        } else if (tag === TAG_PROBLEM) {
          need(4);
          const line = buf.readUInt32LE(pos);
          pos += 4;
          problems.push({ line, reason: str() });
        } else if (tag === TAG_HEADER) {
          const path = str();
          const headerId = str();
          need(12);
          header = { path, headerId, version: buf.readUInt32LE(pos), headerEnd: buf.readDoubleLE(pos + 4) };
          pos += 12;
        } else if (tag === TAG_UNSUPPORTED) {
          unsupported = str();
        } else {
          throw new Torn(); // an unknown tag: not a record this format wrote
        }
      }
      need(36 + 20 + HASH_BYTES);
      const prevCovered = buf.readDoubleLE(pos);
      const covered = buf.readDoubleLE(pos + 8);
      const lines = buf.readUInt32LE(pos + 16);
      const size = buf.readDoubleLE(pos + 20);
      const mtimeMs = buf.readDoubleLE(pos + 28);
      const tailHash = buf.toString('hex', pos + 36, pos + 56);
      pos += 56;
      if (!batchHash(buf, start, pos).equals(buf.subarray(pos, pos + HASH_BYTES))) throw new Torn();
      pos += HASH_BYTES;
      if (state === null) {
        if (header === null || prevCovered !== 0) throw new Torn();
        state = { ...header, entries: cols, problems, covered, lines, size, mtimeMs, tailHash, unsupported };
      } else {
        if (header !== null || prevCovered !== state.covered || covered < state.covered) throw new Torn(); // not a continuation
        for (const p of problems) state.problems.push(p);
        Object.assign(state, { covered, lines, size, mtimeMs, tailHash, unsupported: unsupported ?? state.unsupported });
      }
      validLength = pos;
      committed = cols.n;
    }
  } catch (e) {
    if (!(e instanceof Torn)) throw e;
    // A batch cut off or damaged: everything before it stands, as validLength says; its entries are dropped.
  }
  if (state === null) return null;
  cols.truncate(committed);
  return { state, validLength };
}
