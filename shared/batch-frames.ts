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

/** A frame of a body decoded as chunks: its body as views into them, in order (a body that crosses chunks is several). */
export interface ChunkedFrame {
  header: Record<string, unknown>;
  /** The body's bytes as views into the received chunks (no copy); one view when the body lies in one chunk. */
  parts: Uint8Array[];
}

/** What a FrameDecoder tells as the body arrives: a frame's header once parsed, then each part of its body. */
export interface FrameBodySink {
  start(index: number, header: Record<string, unknown>): void;
  part(index: number, part: Uint8Array): void;
}

/** The header's `bytes`, checked: an integer >= 0 within the body limit. */
function bodyBytesOf(header: Record<string, unknown>, where: string, maxBodyBytes: number): number {
  const n = header.bytes;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw bad(`${where}: "bytes" must be an integer >= 0, got ${JSON.stringify(n) ?? 'nothing'}`);
  }
  if (n > maxBodyBytes) throw bad(`${where}: "bytes" is ${n}, a body may have at most ${maxBodyBytes}`);
  return n;
}

/**
 * Decodes a frames body as it arrives: `push` each chunk in order, then `end` gives the frames. Header lines that
 * cross chunks are joined (a copy of the line); bodies are never copied, and `sink` sees each body's parts as they
 * come (a server hashes and checks them while the rest of the request is still on its way). `push` never throws: the
 * first fault in the body is kept and thrown by `end`, so a caller reading the body still counts it to its end and
 * its own limits speak first. Checks and messages as decodeFrameChunks, with byte offsets into the whole body.
 */
export class FrameDecoder {
  private readonly frames: ChunkedFrame[] = [];
  private readonly maxHeaderBytes: number;
  private readonly maxDepth: number;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  private fault: unknown = null;
  /** Bytes pushed so far (the offset of the next chunk's first byte). */
  private total = 0;
  /** Bytes of the magic line matched so far, until all of it has. */
  private magicSeen = 0;
  /** The header line being read: whether one is, its pieces so far (views), their bytes, and where it started. */
  private inLine = false;
  private line: Uint8Array[] = [];
  private lineBytes = 0;
  private lineStart = 0;
  /** The frame whose body is arriving, the bytes of it still to come, and where it started. */
  private body: ChunkedFrame | null = null;
  private bodyLeft = 0;
  private bodyStart = 0;

  constructor(
    private readonly opts: DecodeFramesOptions,
    private readonly sink?: FrameBodySink,
  ) {
    this.maxHeaderBytes = opts.maxHeaderBytes ?? MAX_FRAME_HEADER_BYTES;
    this.maxDepth = opts.maxHeaderDepth ?? MAX_FRAME_HEADER_DEPTH;
  }

  push(chunk: Uint8Array): void {
    const base = this.total;
    this.total += chunk.byteLength;
    if (this.fault !== null) return;
    try {
      this.feed(chunk, base);
    } catch (e) {
      this.fault = e;
    }
  }

  /** The frames of the whole body; throws bad_input for the first fault in it. */
  end(): ChunkedFrame[] {
    if (this.fault !== null) throw this.fault;
    if (this.magicSeen < MAGIC_BYTES.byteLength) throw noMagic();
    const index = this.frames.length - 1;
    if (this.body) {
      const n = this.body.header.bytes as number;
      throw bad(`frame ${index} (byte ${this.lineStart}): the header says ${n} body bytes, only ${this.total - this.bodyStart} follow (cut short)`);
    }
    if (this.inLine) throw bad(`frame ${index + 1} (byte ${this.lineStart}): the header line has no newline (the body ends inside it)`);
    return this.frames;
  }

  private feed(chunk: Uint8Array, base: number): void {
    const len = chunk.byteLength;
    let off = 0;
    while (off < len) {
      if (this.body) {
        const k = Math.min(len - off, this.bodyLeft);
        const part = chunk.subarray(off, off + k);
        this.body.parts.push(part);
        this.sink?.part(this.frames.length - 1, part);
        off += k;
        this.bodyLeft -= k;
        if (this.bodyLeft === 0) this.body = null;
        continue;
      }
      if (this.magicSeen < MAGIC_BYTES.byteLength) {
        for (; off < len && this.magicSeen < MAGIC_BYTES.byteLength; off++, this.magicSeen++) if (chunk[off] !== MAGIC_BYTES[this.magicSeen]) throw noMagic();
        continue;
      }
      if (!this.inLine) {
        if (this.frames.length >= this.opts.maxFrames) throw bad(`more than ${this.opts.maxFrames} frames in one body`);
        this.inLine = true;
        this.lineStart = base + off;
      }
      // The newline only as far as a header may reach: a body without one is refused after 64 KiB, not at its end.
      const stop = Math.min(len, off + this.maxHeaderBytes + 1 - this.lineBytes);
      const nl = chunk.indexOf(NEWLINE, off);
      if (nl < 0 || nl >= stop) {
        if (stop < len || this.lineBytes + (len - off) > this.maxHeaderBytes) throw bad(`frame ${this.frames.length} (byte ${this.lineStart}): the header line is longer than ${this.maxHeaderBytes} bytes`);
        this.line.push(chunk.subarray(off));
        this.lineBytes += len - off;
        off = len;
        continue;
      }
      if (nl > off) this.line.push(chunk.subarray(off, nl));
      off = nl + 1;
      this.headerLine(chunk, off, base);
    }
  }

  /** The header line just ended (the body, if any, starts at `off` of `chunk`). */
  private headerLine(chunk: Uint8Array, off: number, base: number): void {
    const index = this.frames.length;
    const where = `frame ${index} (byte ${this.lineStart})`;
    const bytes = this.line.length === 1 ? this.line[0]! : concatChunks(this.line);
    this.line = [];
    this.lineBytes = 0;
    this.inLine = false;
    let text: string;
    try {
      text = this.utf8.decode(bytes);
    } catch {
      throw bad(`${where}: the header is not valid UTF-8`);
    }
    const header = parseHeader(text, index, this.lineStart, this.maxDepth);
    const n = bodyBytesOf(header, where, this.opts.maxBodyBytes);
    // An empty body is still a view (of where it lies), as decodeFrames has always given.
    const frame: ChunkedFrame = { header, parts: n === 0 ? [chunk.subarray(off, off)] : [] };
    this.frames.push(frame);
    this.sink?.start(index, header);
    if (n > 0) {
      this.body = frame;
      this.bodyLeft = n;
      this.bodyStart = base + off;
    }
  }
}

function noMagic(): SessyncError {
  return bad(`the body does not start with the line "${FRAMES_MAGIC.trim()}"`);
}

/** decodeFrames over a body as it arrived, in chunks (FrameDecoder given them all at once). */
export function decodeFrameChunks(chunks: readonly Uint8Array[], opts: DecodeFramesOptions): ChunkedFrame[] {
  const d = new FrameDecoder(opts);
  for (const c of chunks) d.push(c);
  return d.end();
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
