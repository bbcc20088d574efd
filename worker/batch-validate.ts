// Checks a pushed batch before anything is stored: envelope against path, body hash and size, every entry line, the meta.
import { checkEntry, checkHeader } from '../shared/entry.js';
import { SessyncError } from '../shared/errors.js';
import { findTooDeepText, findTooDeepValue, formatTooDeep } from '../shared/json-limits.js';
import { ENTRY_ID_RE, LIMITS, type AnySessionMetaInput, type BatchEnvelope, type SessionMetaInput } from '../shared/wire.js';
import { sha256Hex } from './sha256.js';
import { releaseScanned, scanEntry } from '../shared/entry-line-scan.js';
import { joinBody, type BlobBody } from './store/blob-store.js';

const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One push as the server handles it, whichever way it came: the body's bytes as sent. A frame carries them raw (JSONL
 * as UTF-8, ciphertext as its bytes); a JSON push carries a string, whose UTF-8 these are (`base64`: an aes-256-gcm
 * body sent as base64 text by a client that predates frames).
 */
export interface BatchPush {
  envelope: BatchEnvelope;
  meta?: AnySessionMetaInput | undefined;
  /** One buffer, or the parts of a frames body as they arrived (views into the received chunks, never joined). */
  body: BlobBody;
  base64: boolean;
}

/** A push body's parts (one buffer is one part). */
export function bodyParts(body: BlobBody): readonly Uint8Array[] {
  return Array.isArray(body) ? body : [body as Uint8Array];
}

/** A push body's size in bytes. */
export function bodyLength(body: BlobBody): number {
  let n = 0;
  for (const p of bodyParts(body)) n += p.byteLength;
  return n;
}

/** A JSON push (`body` a string) as a BatchPush: one encode of the string, nothing decoded. */
export function jsonPush(req: { envelope: BatchEnvelope; body: string; meta?: AnySessionMetaInput | undefined }): BatchPush {
  const out: BatchPush = { envelope: req.envelope, body: encoder.encode(req.body), base64: req.envelope.encoding === 'aes-256-gcm' };
  if (req.meta !== undefined) out.meta = req.meta;
  return out;
}
/** AES-GCM's 12-byte nonce and 16-byte tag: what a sealed batch holds before its first byte of plaintext. */
const MIN_SEALED_BYTES = 28;

/** 1 for the bytes of the base64 alphabet (A-Z a-z 0-9 + /). */
const BASE64_ALPHABET = (() => {
  const t = new Uint8Array(256);
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') t[c.charCodeAt(0)] = 1;
  return t;
})();

/**
 * Non-empty base64 alphabet with at most two '=' at the end: what /^[A-Za-z0-9+/]+={0,2}$/ accepts, by a table walk
 * over the bytes the hash needed anyway (the regex cost a ciphertext push most of its CPU: 6 ms per MB).
 */
export function isBase64Bytes(bytes: Uint8Array): boolean {
  let end = bytes.length;
  while (end > 0 && bytes.length - end < 2 && bytes[end - 1] === 0x3d /* = */) end--;
  if (end === 0) return false;
  for (let i = 0; i < end; i++) if (BASE64_ALPHABET[bytes[i]!] === 0) return false;
  return true;
}

function bad(message: string): SessyncError {
  return new SessyncError('bad_input', message);
}

/** Splits a JSONL body into lines; a final newline is optional, an empty line anywhere else is refused. */
export function splitLines(body: string): string[] {
  const lines = body.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Throws a 4xx SessyncError for anything wrong with the batch; returns the body's size in bytes. Ciphertext batches
 * (`aes-256-gcm`) get only the envelope, size and hash checks (a raw body is never decoded or copied: the server
 * cannot read it); a jsonl body is scanned as bytes (shared/entry-line-scan.ts), and decoded from UTF-8 once for the
 * full line checks only when the scan is not certain of every line.
 */
export async function validateBatch(pathSession: string, push: BatchPush, lineCheck: 'scan' | 'parse' = 'scan'): Promise<number> {
  const env = push.envelope;
  const parts = bodyParts(push.body);
  const size = bodyLength(push.body);
  if (env.session !== pathSession) {
    throw bad(`envelope.session "${env.session}" does not match the session in the URL "${pathSession}"`);
  }
  if (size > LIMITS.maxBatchBytes) {
    throw new SessyncError('too_large', `batch body is ${size} bytes, more than the limit of ${LIMITS.maxBatchBytes}; split it into smaller batches`);
  }
  const actual = await sha256Hex(parts);
  if (actual !== env.sha256) throw bad(`envelope.sha256 does not match the body (body hashes to ${actual}); the body was changed or truncated`);
  if (env.encoding === 'aes-256-gcm') {
    // Even an empty batch seals to a 12-byte nonce and a 16-byte tag: anything shorter can never be opened.
    if (!push.base64) {
      if (size < MIN_SEALED_BYTES) throw bad(`an aes-256-gcm body must hold at least the ${MIN_SEALED_BYTES} bytes of nonce and tag; this one has ${size}`);
      return size;
    }
    // Base64 comes only in a JSON push: one buffer already.
    const bytes = joinBody(push.body);
    if (!isBase64Bytes(bytes)) throw bad('an aes-256-gcm body must be base64 ciphertext');
    let chars = bytes.byteLength;
    while (chars > 0 && bytes[chars - 1] === 0x3d /* = */) chars--;
    if (Math.floor((chars * 3) / 4) < MIN_SEALED_BYTES) {
      throw bad(`an aes-256-gcm body must hold at least the ${MIN_SEALED_BYTES} bytes of nonce and tag; this one decodes to ${Math.floor((chars * 3) / 4)}`);
    }
    return bytes.byteLength;
  }
  if (size === 0 || env.entryCount === 0) {
    // An empty batch announces a session that has only its header yet (it carries the meta): seq 1, nothing else.
    if (size !== 0 || env.entryCount !== 0) throw bad(`envelope.entryCount is ${env.entryCount} but the body is ${size === 0 ? 'empty' : 'not empty'}`);
    if (env.seq !== 1 || !push.meta) throw bad('an empty batch is only a new session\'s first batch (seq 1, with meta); later batches hold at least one entry');
    return 0;
  }
  // Most bodies are lines every check below accepts, which one scan of the bytes shows without decoding them or
  // building a value; a body with any line that scan is not certain of gets the full checks (and their wording).
  // ('parse': the full checks on every body, the reference the scan is tested against.)
  if (lineCheck === 'scan' && allLinesCertain(parts, env.entryCount)) return size;
  let text: string;
  try {
    text = utf8.decode(joinBody(push.body));
  } catch {
    throw bad('a jsonl body must be UTF-8 text');
  }
  const lines = splitLines(text);
  if (lines.length !== env.entryCount) {
    throw bad(`envelope.entryCount is ${env.entryCount} but the body has ${lines.length} line(s)`);
  }
  if (lines.length > LIMITS.maxEntriesPerBatch) {
    throw new SessyncError('too_large', `batch has ${lines.length} entries, more than the limit of ${LIMITS.maxEntriesPerBatch}`);
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const where = `body line ${i + 1}`;
    if (line.length > LIMITS.maxEntryBytes / 3 && encoder.encode(line).byteLength > LIMITS.maxEntryBytes) {
      throw new SessyncError('too_large', `${where}: entry is larger than the limit of ${LIMITS.maxEntryBytes} bytes`);
    }
    if (line.trim() === '') throw bad(`${where} is empty; JSONL bodies have one entry per line`);
    // Before the parse: every reader of this line later (merge, redaction, the viewer) walks it.
    const deep = findTooDeepText(line, LIMITS.maxJsonDepth);
    if (deep) throw bad(`${where}: the entry nests JSON deeper than ${LIMITS.maxJsonDepth} levels (the limit), at ${formatTooDeep(deep)}`);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw bad(`${where} is not valid JSON (${(e as Error).message})`);
    }
    const problem = checkEntry(value);
    if (problem) throw bad(`${where}: ${problem}`);
    const id = (value as { id: string }).id;
    if (!ENTRY_ID_RE.test(id)) throw bad(`${where}: entry id "${id.slice(0, 80)}" is not valid (letters, digits, _ . : - only, at most 128)`);
  }
  return size;
}

const NEWLINE = 0x0a;

/**
 * Whether the body (in parts, as received) is `entryCount` lines (a final '\n' optional) that the line checks of
 * validateBatch certainly accept: none over LIMITS.maxEntryBytes, each one an entry scanEntryLine is certain of.
 * false is "not certain", and the full checks decide. A line that crosses from one part into the next is copied
 * (that line only) and scanned whole.
 */
function allLinesCertain(parts: readonly Uint8Array[], entryCount: number): boolean {
  if (entryCount > LIMITS.maxEntriesPerBatch) return false;
  let lines = 0;
  try {
    for (let p = 0, start = 0; p < parts.length; ) {
      const b = parts[p]!;
      if (start >= b.length) {
        p++;
        start = 0;
        continue;
      }
      // The scan finds where the line ends (the '\n' after its value), so the body is walked once.
      const nl = scanEntry(b, start, b.length, LIMITS.maxJsonDepth);
      const crosses = (nl === b.length || (nl < 0 && b.indexOf(NEWLINE, start) < 0)) && moreBytes(parts, p + 1);
      if (!crosses) {
        if (nl < 0 || ++lines > entryCount || nl - start > LIMITS.maxEntryBytes) return false;
        start = nl + 1;
        continue;
      }
      const line = crossingLine(parts, p, start);
      if (!line) return false;
      const end = scanEntry(line.bytes, 0, line.bytes.length, LIMITS.maxJsonDepth);
      if (end !== line.length || ++lines > entryCount) return false;
      p = line.part;
      start = line.next;
    }
  } finally {
    releaseScanned(); // the body is the request's: not kept alive until the next push
  }
  return lines === entryCount;
}

function moreBytes(parts: readonly Uint8Array[], from: number): boolean {
  for (let q = from; q < parts.length; q++) if (parts[q]!.byteLength > 0) return true;
  return false;
}

/**
 * The line that starts at `start` of part `p` and ends in a later part, copied into one buffer with its '\n' (none
 * when the body ends first); `length` is the line's without it, and `part`/`next` where the following line starts.
 * null when the line is longer than an entry may be (the full checks then say so).
 */
function crossingLine(parts: readonly Uint8Array[], p: number, start: number): { bytes: Uint8Array; length: number; part: number; next: number } | null {
  const pieces: Uint8Array[] = [parts[p]!.subarray(start)];
  let length = pieces[0]!.byteLength;
  for (let q = p + 1; q < parts.length; q++) {
    const b = parts[q]!;
    const at = b.indexOf(NEWLINE);
    if (length + (at < 0 ? b.byteLength : at) > LIMITS.maxEntryBytes) return null;
    if (at >= 0) {
      pieces.push(b.subarray(0, at + 1));
      return { bytes: joinBody(pieces), length: length + at, part: q, next: at + 1 };
    }
    pieces.push(b);
    length += b.byteLength;
  }
  return { bytes: joinBody(pieces), length, part: parts.length, next: 0 };
}

/**
 * Throws a 400 SessyncError for a meta the server must not keep: a header nested deeper than
 * LIMITS.maxJsonDepth, larger than LIMITS.maxHeaderBytes as JSON, one a client could not use as
 * a session file's first line, or one of another session than `session` (the one it is pushed for).
 */
export function validateMeta(meta: SessionMetaInput, session: string): void {
  const path = findTooDeepValue(meta.header, LIMITS.maxJsonDepth);
  if (path) throw bad(`meta.header nests JSON deeper than ${LIMITS.maxJsonDepth} levels (the limit), at meta.header.${path.slice(0, 6).join('.')}...`);
  const json = JSON.stringify(meta.header);
  const size = encoder.encode(json).byteLength;
  if (size > LIMITS.maxHeaderBytes) {
    throw new SessyncError('too_large', `meta.header is ${size} bytes as JSON, more than the limit of ${LIMITS.maxHeaderBytes} (a session's first line must stay short for listing)`);
  }
  const problem = checkHeader(meta.header);
  if (problem) throw bad(`meta.header: ${problem}`);
  // Kept as the session's meta: a puller would write a file whose header names another session than its batches.
  const id = meta.header.id as string;
  if (id !== session) {
    throw bad(`meta.header.id ${JSON.stringify(id.slice(0, 200))} is not the session this batch is pushed for (${JSON.stringify(session)}); a session's meta must be its own header`);
  }
}
