// Binary batch frames: a magic line, then per frame a one-line JSON header naming `bytes` and exactly that many raw body bytes.
//
// A frames body (media type FRAMES_TYPE) is `sessync-frames 1\n` followed by frames. A frame is a header, a UTF-8
// JSON object on one line ending in `\n` (at most maxHeaderBytes before the newline), whose `"bytes"` is an integer
// >= 0, followed by exactly that many body bytes and no separator. Bodies are never escaped or base64'd: JSONL goes as
// its UTF-8 bytes, ciphertext as its raw bytes. Headers are generic: every field besides `bytes` passes through, so a
// route can add a field without a codec change.
//
// Refinements of the contract, kept to its intent: `encodeFrames` writes `bytes` itself (from the body's length,
// replacing any `bytes` the caller put in the header) and refuses a header the decoder would refuse; decoded headers
// are typed as objects (they are checked to be); a header may nest at most `maxHeaderDepth` levels and may not spell
// the key `__proto__` (zod drops it silently, so a value sent under it would be lost without a word).
import { SessyncError } from './errors.js';
import { findTooDeepText, formatTooDeep } from './json-limits.js';

/** Media type of a frames body (request Content-Type, or pull request Accept). */
export const FRAMES_TYPE = 'application/vnd.sessync.frames';
/** First line of every frames body: names the format and its version. */
export const FRAMES_MAGIC = 'sessync-frames 1\n';
/** Default (and largest sensible) bytes of one frame header, newline excluded. */
export const MAX_FRAME_HEADER_BYTES = 64 * 1024;
/** Default nesting of one frame header: a push header carries `meta.header` (64 levels) inside `{meta: ...}`. */
export const MAX_FRAME_HEADER_DEPTH = 64 + 2;

export interface Frame {
  header: Record<string, unknown>;
  body: Uint8Array;
}

export interface DecodedFrame {
  /** The header as sent, `bytes` included. */
  header: Record<string, unknown>;
  /** A view into the decoded buffer (no copy): copy it before the buffer is reused. */
  body: Uint8Array;
}

export interface DecodeFramesOptions {
  /** Frames in one body; more is refused. */
  maxFrames: number;
  /** Bytes of one header line before its newline (default MAX_FRAME_HEADER_BYTES). */
  maxHeaderBytes?: number;
  /** Bytes of one frame body. */
  maxBodyBytes: number;
  /** Nesting of one header (default MAX_FRAME_HEADER_DEPTH). */
  maxHeaderDepth?: number;
}

const MAGIC_BYTES = new TextEncoder().encode(FRAMES_MAGIC);
const NEWLINE = 0x0a;
const PROTO_KEY = '__proto__';

function bad(message: string): SessyncError {
  return new SessyncError('bad_input', `frames: ${message}`);
}

/** True when `bytes` starts with the frames magic line (a body or stored record in this format). */
export function hasFramesMagic(bytes: Uint8Array): boolean {
  if (bytes.byteLength < MAGIC_BYTES.byteLength) return false;
  for (let i = 0; i < MAGIC_BYTES.byteLength; i++) if (bytes[i] !== MAGIC_BYTES[i]) return false;
  return true;
}

/**
 * The body as chunks (the magic line, then each header line and each body as given, uncopied): send them as a Blob or
 * stream. Throws bad_input for a header the decoder would refuse (too long or not serialisable to an object).
 */
export function encodeFrames(frames: Frame[], opts: { maxHeaderBytes?: number } = {}): Uint8Array[] {
  const chunks: Uint8Array[] = [MAGIC_BYTES];
  frames.forEach((f, i) => {
    chunks.push(headLine(f.header, f.body.byteLength, i, opts.maxHeaderBytes ?? MAX_FRAME_HEADER_BYTES));
    if (f.body.byteLength > 0) chunks.push(f.body);
  });
  return chunks;
}

/** encodeFrames of one frame whose body is given in parts (as a chunked body was received): the parts are not joined. */
export function encodeFrameParts(header: Record<string, unknown>, parts: readonly Uint8Array[]): Uint8Array[] {
  let bytes = 0;
  for (const p of parts) bytes += p.byteLength;
  const chunks: Uint8Array[] = [MAGIC_BYTES, headLine(header, bytes, 0, MAX_FRAME_HEADER_BYTES)];
  for (const p of parts) if (p.byteLength > 0) chunks.push(p);
  return chunks;
}

const encoder = new TextEncoder();

/** A frame's header line, `bytes` set to the body's length; refused when longer than the decoder takes. */
function headLine(header: Record<string, unknown>, bytes: number, i: number, maxHeaderBytes: number): Uint8Array {
  const head = encoder.encode(`${JSON.stringify({ ...header, bytes })}\n`);
  if (head.byteLength - 1 > maxHeaderBytes) throw bad(`frame ${i}: the header is ${head.byteLength - 1} bytes, at most ${maxHeaderBytes} fit`);
  return head;
}

/** The chunks of `encodeFrames` as one buffer (tests, stored records, and anywhere a single copy is fine). */
export function concatChunks(chunks: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const c of chunks) total += c.byteLength;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Parses one header line; every failure names the frame and its byte offset. */
function parseHeader(text: string, index: number, offset: number, maxDepth: number): Record<string, unknown> {
  const where = `frame ${index} (byte ${offset})`;
  const deep = findTooDeepText(text, maxDepth);
  if (deep) throw bad(`${where}: the header nests JSON deeper than ${deep.limit} levels, at ${formatTooDeep(deep)}`);
  let protoKey = false;
  let value: unknown;
  try {
    value = text.includes(PROTO_KEY) || text.includes('\\u00')
      ? JSON.parse(text, (key, v: unknown) => {
        if (key === PROTO_KEY) protoKey = true;
        return v;
      })
      : JSON.parse(text);
  } catch (e) {
    throw bad(`${where}: the header is not valid JSON (${(e as Error).message})`);
  }
  if (protoKey) throw bad(`${where}: the key "${PROTO_KEY}" is not allowed in a header`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(`${where}: the header is not a JSON object`);
  return value as Record<string, unknown>;
}

/** Reads a body given as chunks (as it arrived) from front to back, by global byte offset. */
class ChunkReader {
  /** Global offset of the next byte. */
  pos = 0;
  private ci = 0;
  private off = 0;

  constructor(
    private readonly chunks: readonly Uint8Array[],
    readonly total: number,
  ) {}

  /** Offset from `pos` of the first newline among the next `limit` bytes, or -1. */
  findNewline(limit: number): number {
    let seen = 0;
    for (let ci = this.ci, off = this.off; ci < this.chunks.length && seen < limit; ci++, off = 0) {
      const c = this.chunks[ci]!;
      const stop = Math.min(c.byteLength, off + (limit - seen));
      const at = c.subarray(off, stop).indexOf(NEWLINE);
      if (at >= 0) return seen + at;
      seen += stop - off;
    }
    return -1;
  }

  /** The next `n` bytes (the caller checked that they are there) as views into the chunks, and moves past them. */
  take(n: number): Uint8Array[] {
    const parts: Uint8Array[] = [];
    for (let left = n; left > 0; ) {
      const c = this.chunks[this.ci]!;
      const k = Math.min(left, c.byteLength - this.off);
      if (k > 0) parts.push(c.subarray(this.off, this.off + k));
      this.off += k;
      left -= k;
      if (this.off === c.byteLength) {
        this.ci++;
        this.off = 0;
      }
    }
    this.pos += n;
    // An empty body is still a view (of where it lies), as decodeFrames has always given.
    return parts.length > 0 ? parts : [this.chunks[this.ci]?.subarray(this.off, this.off) ?? new Uint8Array(0)];
  }

  /** The next `n` bytes as one array: a view when they lie in one chunk, else a copy (header lines, which are short). */
  takeJoined(n: number): Uint8Array {
    const parts = this.take(n);
    return parts.length === 1 ? parts[0]! : concatChunks(parts);
  }
}

/** A frame of a body decoded as chunks: its body as views into them, in order (a body that crosses chunks is several). */
export interface ChunkedFrame {
  header: Record<string, unknown>;
  /** The body's bytes as views into the received chunks (no copy); one view when the body lies in one chunk. */
  parts: Uint8Array[];
}

/**
 * decodeFrames over a body as it arrived, in chunks: header lines that cross chunks are joined (a copy of the line),
 * bodies are never copied. Same checks and messages as decodeFrames, with byte offsets into the whole body.
 */
export function decodeFrameChunks(chunks: readonly Uint8Array[], opts: DecodeFramesOptions): ChunkedFrame[] {
  const maxHeaderBytes = opts.maxHeaderBytes ?? MAX_FRAME_HEADER_BYTES;
  const maxDepth = opts.maxHeaderDepth ?? MAX_FRAME_HEADER_DEPTH;
  let total = 0;
  for (const c of chunks) total += c.byteLength;
  const r = new ChunkReader(chunks, total);
  if (total < MAGIC_BYTES.byteLength || !hasFramesMagic(r.takeJoined(MAGIC_BYTES.byteLength))) {
    throw bad(`the body does not start with the line "${FRAMES_MAGIC.trim()}"`);
  }
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const frames: ChunkedFrame[] = [];
  while (r.pos < total) {
    const index = frames.length;
    const pos = r.pos;
    if (index >= opts.maxFrames) throw bad(`more than ${opts.maxFrames} frames in one body`);
    // Look for the newline only as far as a header may reach: a body without one is refused after 64 KiB, not its end.
    const nl = r.findNewline(maxHeaderBytes + 1);
    if (nl < 0) {
      throw total - pos > maxHeaderBytes
        ? bad(`frame ${index} (byte ${pos}): the header line is longer than ${maxHeaderBytes} bytes`)
        : bad(`frame ${index} (byte ${pos}): the header line has no newline (the body ends inside it)`);
    }
    let text: string;
    try {
      text = utf8.decode(r.takeJoined(nl));
    } catch {
      throw bad(`frame ${index} (byte ${pos}): the header is not valid UTF-8`);
    }
    r.take(1);
    const header = parseHeader(text, index, pos, maxDepth);
    const n = header.bytes;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw bad(`frame ${index} (byte ${pos}): "bytes" must be an integer >= 0, got ${JSON.stringify(n) ?? 'nothing'}`);
    }
    if (n > opts.maxBodyBytes) throw bad(`frame ${index} (byte ${pos}): "bytes" is ${n}, a body may have at most ${opts.maxBodyBytes}`);
    const start = r.pos;
    if (start + n > total) {
      throw bad(`frame ${index} (byte ${pos}): the header says ${n} body bytes, only ${total - start} follow (cut short)`);
    }
    frames.push({ header, parts: r.take(n) });
  }
  return frames;
}

/**
 * Splits a frames body into its frames; each body is a subarray of `bytes` (no copy). Throws bad_input naming what
 * and where for: no magic line, a header line without its newline or too long, a header that is not valid UTF-8 or
 * JSON or not an object, `bytes` missing, negative, not an integer or over maxBodyBytes, a body cut short, more than
 * maxFrames frames.
 */
export function decodeFrames(bytes: Uint8Array, opts: DecodeFramesOptions): DecodedFrame[] {
  // One chunk: every body is a single view into it.
  return decodeFrameChunks([bytes], opts).map((f) => ({ header: f.header, body: f.parts[0]! }));
}
