// Reads a request body with a byte limit (Content-Length and the bytes actually read), as bytes or as JSON checked by a zod schema.
import type { Context } from 'hono';
import type { z } from 'zod';
import { concatChunks } from '../shared/batch-frames.js';
import { SessyncError } from '../shared/errors.js';
import { findTooDeepText, formatTooDeep } from '../shared/json-limits.js';
import { LIMITS } from '../shared/wire.js';

/** Limit for small JSON bodies (pull cursors, admin calls). */
export const SMALL_BODY_BYTES = 1024 * 1024;

function tooLarge(limit: number): SessyncError {
  return new SessyncError('too_large', `request body is larger than ${limit} bytes; send smaller batches`);
}

/** The client went away before its body was complete: nobody reads the answer, and it is no server fault. */
export class RequestAbortedError extends SessyncError {
  constructor(cause: unknown) {
    super('bad_input', 'the request body was cut off: the client disconnected before sending all of it', { cause });
  }
}

/** What this module needs of Node's request stream (an http.IncomingMessage), without a node:* import: this file also runs in workerd. */
interface NodeIncoming {
  readableDidRead: boolean;
  readableEnded: boolean;
  destroyed?: boolean;
  errored?: unknown;
  on(event: string, listener: (arg: never) => void): unknown;
  off(event: string, listener: (arg: never) => void): unknown;
  pause(): unknown;
}

/** The request's Node stream when @hono/node-server hands it over (as `c.env.incoming`) and nothing has read from it yet. */
function unreadNodeIncoming(c: Context): NodeIncoming | null {
  const incoming = (c.env as { incoming?: Partial<NodeIncoming> } | undefined)?.incoming;
  if (!incoming || typeof incoming.on !== 'function' || typeof incoming.off !== 'function' || typeof incoming.pause !== 'function') return null;
  return incoming.readableDidRead === false && incoming.readableEnded === false ? (incoming as NodeIncoming) : null;
}

/**
 * The body read straight from Node's stream, its chunks kept as they arrive: the web stream that Request.body wraps
 * around it copies every chunk once more (Node's Readable.toWeb detaches each from the socket's pool), a copy and a
 * promise per 64 KiB that cost a 100 MB push a few percent of the server's CPU. The limit is counted as there.
 */
function readNodeIncoming(incoming: NodeIncoming, limit: number): Promise<Uint8Array[]> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
      settle();
    };
    const onData = (chunk: Uint8Array) => {
      total += chunk.byteLength;
      if (total > limit) {
        // Reading stops here; the early-close wrapper (Node) ends the connection after the 413 is out.
        incoming.pause();
        finish(() => reject(tooLarge(limit)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(() => resolve(chunks));
    const onError = (e: unknown) => finish(() => reject(new RequestAbortedError(e)));
    const onClose = () => {
      if (incoming.readableEnded) onEnd();
      else finish(() => reject(new RequestAbortedError(new Error('the connection closed before the body ended'))));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
    // A stream the client closed before the route got here sends no more events: its state is the answer.
    if (incoming.errored) onError(incoming.errored);
    else if (incoming.destroyed) onClose();
  });
}

/**
 * The body's bytes as they arrived, in chunks (not joined: a frames body is split over them without a copy); 413 past
 * `limit` bytes (refused by Content-Length before anything is read, when it says so).
 */
export async function readBodyChunks(c: Context, limit: number): Promise<Uint8Array[]> {
  const declared = c.req.header('content-length');
  if (declared !== undefined) {
    const n = Number(declared);
    if (!/^\d+$/.test(declared.trim()) || !Number.isSafeInteger(n)) throw new SessyncError('bad_input', `Content-Length "${declared.slice(0, 40)}" is not a number`);
    if (n > limit) throw tooLarge(limit);
  }
  const incoming = unreadNodeIncoming(c);
  if (incoming) return readNodeIncoming(incoming, limit);
  const stream = c.req.raw.body;
  if (!stream) return [];
  // Count what arrives: Content-Length can be absent (chunked) or wrong.
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw new RequestAbortedError(e);
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      // Not cancel(): on Node that destroys the socket before the 413 is out. The runtime ends the connection after it.
      reader.releaseLock();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return chunks;
}

/** The body's bytes as one buffer (readBodyChunks joined; one chunk, such as a small body or workerd's whole body, is its own buffer). */
export async function readBodyBytes(c: Context, limit: number): Promise<Uint8Array> {
  const chunks = await readBodyChunks(c, limit);
  if (chunks.length === 1) return chunks[0]!;
  return chunks.length === 0 ? new Uint8Array(0) : concatChunks(chunks);
}

/** The body as UTF-8 text; 413 past `limit` bytes, 400 when it is not valid UTF-8. */
export async function readBodyText(c: Context, limit: number): Promise<string> {
  const bytes = await readBodyBytes(c, limit);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SessyncError('bad_input', 'request body is not valid UTF-8');
  }
}

/** Whether the request's Content-Type is `type` (parameters such as charset ignored, case-insensitive). */
export function hasContentType(c: Context, type: string): boolean {
  const ct = c.req.header('content-type');
  return ct !== undefined && ct.split(';')[0]!.trim().toLowerCase() === type;
}

/** Formats zod issues as `path: message` for an error a user can act on. */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 5).map((i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${i.message}`);
  if (error.issues.length > 5) parts.push(`and ${error.issues.length - 5} more`);
  return parts.join('; ');
}

/** A key that zod would silently drop (it sets no prototype), so a value sent under it would be lost without a word. */
const PROTO_KEY = '__proto__';
const ESCAPED_PROTO_CHAR = /\\u00[5-7][0-9a-fA-F]/;

/**
 * JSON-parses and validates text already read; every failure is a 400 SessyncError naming `what`.
 * Nesting past LIMITS.maxRequestJsonDepth and `__proto__` keys are refused before the schema runs.
 */
export function parseJson<S extends z.ZodType>(text: string, schema: S, what: string): z.infer<S> {
  if (text.trim() === '') throw new SessyncError('bad_input', `${what}: the request body is empty; send a JSON object`);
  const deep = findTooDeepText(text, LIMITS.maxRequestJsonDepth);
  if (deep) {
    throw new SessyncError(
      'bad_input',
      `${what}: the request body nests JSON deeper than ${deep.limit} levels, at ${formatTooDeep(deep)} (character ${deep.offset}); ` +
        `meta.header and each entry may nest at most ${LIMITS.maxJsonDepth} levels`,
    );
  }
  let value: unknown;
  let protoKey = false;
  // The reviver costs as much as the parse: only a text that spells the key, or escapes a character it could be
  // spelled with (U+005F to U+0074), can hold it.
  const mayHoldProto = text.includes(PROTO_KEY) || (text.includes('\\u00') && ESCAPED_PROTO_CHAR.test(text));
  try {
    value = mayHoldProto
      ? JSON.parse(text, (key, v: unknown) => {
        if (key === PROTO_KEY) protoKey = true;
        return v;
      })
      : JSON.parse(text);
  } catch (e) {
    throw new SessyncError('bad_input', `${what}: the request body is not valid JSON (${(e as Error).message})`);
  }
  if (protoKey) throw new SessyncError('bad_input', `${what}: the key "${PROTO_KEY}" is not allowed anywhere in a request`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new SessyncError('bad_input', `${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** Reads, JSON-parses and validates the body; every failure is a 4xx SessyncError. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S, limit: number, what: string): Promise<z.infer<S>> {
  return parseJson(await readBodyText(c, limit), schema, what);
}
