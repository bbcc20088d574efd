// JSONL session parsing that survives torn and corrupt lines: every bad line becomes a Problem, nothing around it is lost.
import { CURRENT_VERSION, checkEntry, checkHeader, checkV1Entry, type SessionEntry, type SessionHeader } from './entry.js';

/** A line that was not loaded. `line` is 1-based and counts the header. */
export interface Problem {
  line: number;
  reason: string;
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
}

const MAX_REASON = 300;
const DECODE_SLICE = 32 * 1024;

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
    };
    if (this.version < 2) parsed.entryLines = this.entryLines;
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
      this.sawFirst = true; // a corrupt first line is where the header was
      const msg = err instanceof Error ? err.message : String(err);
      this.problems.push({
        line: this.lineNo,
        reason: clip(isUnterminatedTail ? `torn last line (no newline, invalid JSON): ${msg}` : `invalid JSON: ${msg}`),
      });
      return false;
    }
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
        return true;
      }
      this.problems.push({ line: this.lineNo, reason: 'no session header: the first line is not {"type":"session",...}' });
    }
    if (this.version < 2) {
      const reason = checkV1Entry(value);
      if (reason !== null) this.problems.push({ line: this.lineNo, reason: clip(reason) });
      else {
        this.entries.push(value as SessionEntry);
        this.entryLines.push(this.lineNo);
      }
      return true;
    }
    const reason = checkEntry(value);
    if (reason === null) this.entries.push(value as SessionEntry);
    else this.problems.push({ line: this.lineNo, reason: clip(reason) });
    return true;
  }
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
 * Parses a session from UTF-8 byte chunks (a Node read stream, a fetch body, a generator of
 * Uint8Array), decoding a slice at a time: the file never exists as one string, which keeps the
 * peak memory of opening a large session near the size of its parsed entries. A chunk may be
 * reused by the source once the next one is requested.
 */
export async function parseSessionChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<ParsedSession> {
  if (Symbol.iterator in chunks) return parseSessionChunksSync(chunks);
  const d = new ChunkDecoder();
  for await (const chunk of chunks) d.push(chunk);
  return d.end();
}

/** parseSessionChunks for a synchronous source (e.g. a generator over readSync): no event-loop turn per chunk. */
export function parseSessionChunksSync(chunks: Iterable<Uint8Array>): ParsedSession {
  const d = new ChunkDecoder();
  for (const chunk of chunks) d.push(chunk);
  return d.end();
}

class ChunkDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser = new SessionParser();

  push(chunk: Uint8Array): void {
    // Decode in small slices whatever the chunk size: short-lived strings stay in the young
    // generation instead of the large-object space, which would force full collections.
    for (let i = 0; i < chunk.length; i += DECODE_SLICE) {
      this.parser.push(this.decoder.decode(chunk.subarray(i, i + DECODE_SLICE), { stream: true }));
    }
  }

  end(): ParsedSession {
    this.parser.push(this.decoder.decode());
    return this.parser.end();
  }
}

/** One JSONL line (no newline). Keys keep their order, so an unchanged entry serializes to its original line. */
export function serializeLine(v: object): string {
  return JSON.stringify(v);
}

/** Lines of a whole file: header then entries, each followed by '\n'. */
export function serializeSession(header: SessionHeader, entries: readonly object[]): string {
  let out = serializeLine(header) + '\n';
  for (const e of entries) out += serializeLine(e) + '\n';
  return out;
}
