// JSONL session parsing that survives torn and corrupt lines: every bad line becomes a Problem, nothing around it is lost.
import { CURRENT_VERSION, checkEntry, checkHeader, checkV1Entry, type SessionEntry, type SessionHeader } from './entry.js';
import { toJsonText } from './json-stringify.js';

/** A line that was not loaded. `line` is 1-based and counts the header. */
export interface Problem {
  line: number;
  reason: string;
}

/** A line that held several complete JSON values with no newline between them (two writers raced). */
export interface SplitLine {
  line: number;
  /** How many values the line held; each usable one was loaded as its own line. */
  values: number;
  /** Values of it that did not parse or were not usable entries (also in `problems`). */
  bad: number;
}

export interface ParsedSession {
  header: SessionHeader | null;
  /** header.version ?? 1 (no header: CURRENT_VERSION, the entries are checked as current ones). */
  version: number;
  /** Usable entries in file order. For version 1 they have no id/parentId until migrateSession. */
  entries: SessionEntry[];
  problems: Problem[];
  /** The text does not end in '\n' and its last line does not parse: an interrupted write. */
  tornTail: boolean;
  /**
   * Version-1 files only: the 1-based line number of each entry. Migration derives ids from line
   * positions, which a corrupt line elsewhere must not shift (two machines must agree).
   */
  entryLines?: number[];
  /** Version-1 files only, beside entryLines: the value's place in its line (0 unless the line was split). */
  entryPieces?: number[];
  /** Lines split into several values (see SplitLine); empty for a healthy file. */
  splitLines: SplitLine[];
}

const MAX_REASON = 300;

/**
 * Incremental parser: feed text in chunks of any size (split anywhere, also inside a line), then
 * call end(). Lets a reader decode a large file piece by piece instead of holding all of it as
 * one string. parseSession(text) is push(text) + end().
 */
export class SessionParser {
  private carry = '';
  private lineNo = 0;
  private sawFirst = false;
  private header: SessionHeader | null = null;
  private version = CURRENT_VERSION;
  private readonly entries: SessionEntry[] = [];
  private readonly problems: Problem[] = [];
  private readonly entryLines: number[] = [];
  private readonly entryPieces: number[] = [];
  private readonly splitLines: SplitLine[] = [];
  /** Place of the value being handled within its line (0 unless the line is being split). */
  private piece = 0;

  push(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n');
    if (nl < 0) {
      this.carry += chunk;
      return;
    }
    if (this.carry !== '') {
      const first = this.carry + chunk.slice(0, nl);
      this.carry = '';
      this.line(first);
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    while (nl >= 0) {
      this.line(chunk.slice(start, nl));
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    this.carry = start < chunk.length ? chunk.slice(start) : '';
  }

  /** One complete line, without its '\n' (the caller has cut the text into lines). */
  pushLine(text: string): void {
    if (this.carry !== '') {
      // Text pushed before ends this line (push() and pushLine() mixed).
      text = this.carry + text;
      this.carry = '';
    }
    this.line(text);
  }

  end(): ParsedSession {
    let tornTail = false;
    if (this.carry !== '') {
      const last = this.carry;
      this.carry = '';
      // A last line without '\n' is fine when it parses; when it does not, it is a write that was cut off.
      tornTail = !this.line(last, true);
    }
    const parsed: ParsedSession = {
      header: this.header,
      version: this.version,
      entries: this.entries,
      problems: this.problems,
      tornTail,
      splitLines: this.splitLines,
    };
    if (this.version < 2) {
      parsed.entryLines = this.entryLines;
      parsed.entryPieces = this.entryPieces;
    }
    return parsed;
  }

  /** Handles one line; returns false only when it is not valid JSON. */
  private line(text: string, isUnterminatedTail = false): boolean {
    this.lineNo++;
    if (this.lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte-order mark some editors add
    if (isBlank(text)) return true; // carries no data
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const split = parseJsonLine(text); // rare path: a line that does not parse may hold several values
      if (split.pieces > 1) {
        this.splitLine(split);
        return true;
      }
      this.sawFirst = true; // a corrupt first line is where the header was
      this.problems.push({ line: this.lineNo, reason: clip(isUnterminatedTail ? `torn last line (no newline, invalid JSON): ${errText(err)}` : `invalid JSON: ${errText(err)}`) });
      return false;
    }
    this.value(value);
    return true;
  }

  /** Several values on one line: each is loaded as if it had a line of its own; one that does not parse is reported. */
  private splitLine(split: LineValues): void {
    const before = this.problems.length;
    for (const e of split.errors) {
      this.sawFirst = true;
      this.problems.push({ line: this.lineNo, reason: clip(`invalid JSON: ${e}`) });
    }
    split.values.forEach((v, k) => {
      this.piece = split.at[k]!;
      this.value(v);
    });
    this.piece = 0;
    this.splitLines.push({ line: this.lineNo, values: split.pieces, bad: this.problems.length - before });
  }

  /** One parsed JSON value: the header (first value of the file) or an entry. */
  private value(value: unknown): void {
    if (!this.sawFirst) {
      this.sawFirst = true;
      if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'session') {
        const reason = checkHeader(value);
        if (reason === null) {
          this.header = value as SessionHeader;
          this.version = this.header.version ?? 1;
        } else {
          this.problems.push({ line: this.lineNo, reason: clip(reason) });
        }
        return;
      }
      this.problems.push({ line: this.lineNo, reason: 'no session header: the first line is not {"type":"session",...}' });
    }
    if (this.version < 2) {
      const reason = checkV1Entry(value);
      if (reason !== null) this.problems.push({ line: this.lineNo, reason: clip(reason) });
      else {
        this.entries.push(value as SessionEntry);
        this.entryLines.push(this.lineNo);
        this.entryPieces.push(this.piece);
      }
      return;
    }
    const reason = checkEntry(value);
    if (reason === null) this.entries.push(value as SessionEntry);
    else this.problems.push({ line: this.lineNo, reason: clip(reason) });
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The values of one line: one normally; several when values were glued together (see splitJsonValues). */
export interface LineValues {
  values: unknown[];
  /** Each value's place among the line's values (values that did not parse leave gaps). */
  at: readonly number[];
  /** Why each value (or the whole line) that did not parse was skipped. */
  errors: readonly string[];
  /** How many values the line held (1 unless it was split). */
  pieces: number;
}

/** `at` and `errors` of every line that parses, shared (readonly to callers): a line costs its parse and one small array. */
const ONE_AT: readonly number[] = [0];
const NO_ERRORS: readonly string[] = [];

/** JSON.parse of one line, splitting a line that holds several values: the one rule every reader uses. */
export function parseJsonLine(text: string): LineValues {
  try {
    return { values: [JSON.parse(text)], at: ONE_AT, errors: NO_ERRORS, pieces: 1 };
  } catch (err) {
    const pieces = splitJsonValues(text);
    if (!pieces) return { values: [], at: [], errors: [errText(err)], pieces: 1 };
    const values: unknown[] = [];
    const at: number[] = [];
    const errors: string[] = [];
    pieces.forEach((p, k) => {
      try {
        values.push(JSON.parse(p));
        at.push(k);
      } catch (e) {
        errors.push(`value ${k + 1} of ${pieces.length} on this line: ${errText(e)}`);
      }
    });
    return { values, at, errors, pieces: pieces.length };
  }
}

/**
 * The JSON values of a line that holds more than one, cut where a top-level object or array closes (strings
 * and escapes respected), e.g. `{"a":1}{"b":2}` written by two racing writers. Nothing is guessed: each piece
 * is the exact text between two cuts, and the caller still parses (and may reject) each. null when the line
 * holds one value or less (the plain invalid-JSON case).
 */
export function splitJsonValues(text: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: the next char is escaped
      else if (c === 34) inString = false;
      continue;
    }
    if (start < 0) {
      if (c === 32 || c === 9 || c === 13) continue; // whitespace between values
      start = i;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) {
        out.push(text.slice(start, i + 1));
        start = -1;
      } else if (depth < 0) return null; // a stray closer: not values glued together
    }
  }
  if (start >= 0) out.push(text.slice(start)); // an unfinished last value: reported by the caller
  return out.length > 1 ? out : null;
}

function isBlank(s: string): boolean {
  // Fast path: a real line starts with '{'.
  if (s.length === 0) return true;
  const c = s.charCodeAt(0);
  if (c === 123) return false;
  return s.trim() === '';
}

function clip(s: string): string {
  return s.length > MAX_REASON ? `${s.slice(0, MAX_REASON)}…` : s;
}

/** Parses a whole session file. Never throws on bad lines: each becomes a Problem. */
export function parseSession(text: string): ParsedSession {
  const p = new SessionParser();
  p.push(text);
  return p.end();
}

/**
 * How bytes [start, end) of complete lines become text. The default uses TextDecoder for every
 * line; a host can pass a faster one (the CLI's uses Node's Buffer and buffer.isAscii).
 */
export interface ByteDecoder {
  /** Whether every byte is below 0x80. Answering false is always correct, only slower. */
  isAscii(bytes: Uint8Array, start: number, end: number): boolean;
  /** One char per byte. Used only for bytes isAscii accepted, so any single-byte decoding works. */
  oneByte(bytes: Uint8Array, start: number, end: number): string;
  /** UTF-8, invalid sequences as U+FFFD, a byte-order mark kept. */
  utf8(bytes: Uint8Array, start: number, end: number): string;
}

function textDecoders(): ByteDecoder {
  // ignoreBOM: a byte-order mark stays in the text, and only the first line may drop it (as in push()).
  const td = new TextDecoder('utf-8', { ignoreBOM: true });
  return {
    isAscii: () => false,
    oneByte: (bytes, start, end) => td.decode(bytes.subarray(start, end)),
    utf8: (bytes, start, end) => td.decode(bytes.subarray(start, end)),
  };
}

/**
 * Parses a session from UTF-8 byte chunks (a Node read stream, a fetch body, a generator of
 * Uint8Array), decoding what each chunk holds of complete lines: the file never exists as one
 * string, which keeps the peak memory of opening a large session near the size of its parsed
 * entries. A chunk may be reused by the source once the next one is requested.
 */
export async function parseSessionChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, decoder?: ByteDecoder): Promise<ParsedSession> {
  if (Symbol.iterator in chunks) return parseSessionChunksSync(chunks, decoder);
  const d = new LineSplitter(decoder ?? textDecoders());
  for await (const chunk of chunks) d.push(chunk);
  return d.end();
}

/** parseSessionChunks for a synchronous source (e.g. a generator over readSync): no event-loop turn per chunk. */
export function parseSessionChunksSync(chunks: Iterable<Uint8Array>, decoder?: ByteDecoder): ParsedSession {
  const d = new LineSplitter(decoder ?? textDecoders());
  for (const chunk of chunks) d.push(chunk);
  return d.end();
}

const NL = 0x0a; // never part of a multi-byte UTF-8 sequence, so bytes can be cut there before decoding

/**
 * Cuts byte chunks into lines for a SessionParser. The complete lines of a chunk are decoded as
 * one one-byte string when they are all ASCII, and each line is a slice of it (no copy per line);
 * otherwise each ASCII line is still such a slice and only the other lines are decoded as UTF-8.
 * One-byte strings are also what JSON.parse reads fastest.
 */
class LineSplitter {
  private readonly parser = new SessionParser();
  /** Copies of the bytes of a line that has not ended yet (the source may reuse its chunk). */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(private readonly dec: ByteDecoder) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    const first = chunk.indexOf(NL);
    if (first < 0) {
      this.keep(chunk, 0, chunk.length);
      return;
    }
    if (this.pendingBytes > 0) {
      this.keep(chunk, 0, first);
      this.parser.pushLine(this.decodeAll(this.takePending()));
      start = first + 1;
    }
    const last = chunk.lastIndexOf(NL);
    if (start <= last) this.pushLines(chunk, start, last);
    if (last + 1 < chunk.length) this.keep(chunk, last + 1, chunk.length);
  }

  end(): ParsedSession {
    if (this.pendingBytes > 0) this.parser.push(this.decodeAll(this.takePending())); // no '\n': end() judges it as the last line
    return this.parser.end();
  }

  /** The lines in bytes [start, last], where bytes[last] is '\n'. */
  private pushLines(bytes: Uint8Array, start: number, last: number): void {
    const dec = this.dec;
    const parser = this.parser;
    if (dec.isAscii(bytes, start, last)) {
      const text = dec.oneByte(bytes, start, last + 1);
      let from = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
        parser.pushLine(text.slice(from, nl));
        from = nl + 1;
      }
      return;
    }
    let text: string | undefined; // the one-byte decoding of the whole run, made once the first ASCII line needs it
    let from = start;
    for (let nl = bytes.indexOf(NL, from); nl >= 0 && nl <= last; nl = bytes.indexOf(NL, from)) {
      if (dec.isAscii(bytes, from, nl)) {
        text ??= dec.oneByte(bytes, start, last + 1);
        parser.pushLine(text.slice(from - start, nl - start));
      } else {
        parser.pushLine(dec.utf8(bytes, from, nl));
      }
      from = nl + 1;
    }
  }

  private decodeAll(bytes: Uint8Array): string {
    return this.dec.isAscii(bytes, 0, bytes.length) ? this.dec.oneByte(bytes, 0, bytes.length) : this.dec.utf8(bytes, 0, bytes.length);
  }

  private keep(chunk: Uint8Array, start: number, end: number): void {
    if (end === start) return;
    const copy = new Uint8Array(end - start); // not chunk.slice: on a Node Buffer that is a view
    copy.set(chunk.subarray(start, end));
    this.pending.push(copy);
    this.pendingBytes += end - start;
  }

  private takePending(): Uint8Array {
    const parts = this.pending;
    let out: Uint8Array;
    if (parts.length === 1) out = parts[0]!;
    else {
      out = new Uint8Array(this.pendingBytes);
      let at = 0;
      for (const p of parts) {
        out.set(p, at);
        at += p.length;
      }
    }
    this.pending = [];
    this.pendingBytes = 0;
    return out;
  }
}

/** One JSONL line (no newline). Keys keep their order, so an unchanged entry serializes to its original line. */
export function serializeLine(v: object): string {
  return toJsonText(v);
}

/** Lines of a whole file: header then entries, each followed by '\n'; an entry in `texts` is written as that exact line. */
export function serializeSession(header: SessionHeader, entries: readonly object[], texts?: ReadonlyMap<object, string>): string {
  let out = serializeLine(header) + '\n';
  for (const e of entries) out += (texts?.get(e) ?? serializeLine(e)) + '\n';
  return out;
}

/** One complete line of any agent's JSONL file: its exact text (no '\n') and its value, or why it did not parse. */
export interface RawLine {
  /** 1-based. */
  line: number;
  text: string;
  /** Set when the text is a JSON object. */
  value?: Record<string, unknown>;
  /** Set when it is not (invalid JSON, or JSON that is not an object). */
  error?: string;
}

/**
 * Cuts any agent's JSONL text into complete lines, each kept as written (the text is the truth, the value a
 * reading of it). Text after the last '\n' is returned as `tail`, not judged: another program may still be
 * writing it. Blank lines carry nothing and are skipped (their numbers still count).
 */
export function parseJsonLines(text: string): { lines: RawLine[]; tail: string } {
  const lines: RawLine[] = [];
  let start = 0;
  let no = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    const t = text.slice(start, nl);
    start = nl + 1;
    no++;
    if (isBlank(t)) continue;
    try {
      const v: unknown = JSON.parse(t);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) lines.push({ line: no, text: t, value: v as Record<string, unknown> });
      else lines.push({ line: no, text: t, error: 'not a JSON object' });
    } catch (err) {
      lines.push({ line: no, text: t, error: clip(`invalid JSON: ${err instanceof Error ? err.message : String(err)}`) });
    }
  }
  return { lines, tail: text.slice(start) };
}
