// The batches of a push request, from a frames body (raw bytes) or a JSON one (older clients), each parsed on its own.
import type { Context } from 'hono';
import { decodeFrameChunks, FRAMES_TYPE } from '../shared/batch-frames.js';
import { SessyncError } from '../shared/errors.js';
import { LIMITS, PushBatchRequestSchema, PushBatchesRequestSchema } from '../shared/wire.js';
import { parseFrameHeader } from './frame-header.js';
import { jsonPush, type BatchPush } from './batch-validate.js';
import { describeIssues, hasContentType, parseJson, readBodyChunks, readBodyText } from './request-body.js';

/** One item of a push request: ready to store, or the bad_input it is answered with (the other items go on). */
export type PushItem = { ok: true; push: BatchPush } | { ok: false; error: SessyncError };

/** Whether the request's body is frames (FRAMES_TYPE); anything else is read as JSON, as every older client sends. */
export function isFramesRequest(c: Context): boolean {
  return hasContentType(c, FRAMES_TYPE);
}

/**
 * The request's batches. Frames: the body read as bytes within LIMITS.maxRequestBytes (413 past it, refused early by
 * Content-Length) and split over its chunks without a copy; a malformed body (no magic line, a header cut or not JSON, a `bytes` that
 * lies) refuses the whole request, before anything is stored. Each frame header is then its own item, as each element
 * of a JSON request's `batches` is. `what` names the route in messages; `maxItems`, the frames a body may hold.
 */
export async function readPushItems(c: Context, what: string, maxItems: number): Promise<PushItem[]> {
  if (!isFramesRequest(c)) {
    const req = parseJson(await readBodyText(c, LIMITS.maxRequestBytes), PushBatchesRequestSchema, what);
    return req.batches.map((raw, i) => {
      const parsed = PushBatchRequestSchema.safeParse(raw);
      return parsed.success ? { ok: true, push: jsonPush(parsed.data) } : { ok: false, error: new SessyncError('bad_input', `${what}: batches.${i}: ${describeIssues(parsed.error)}`) };
    });
  }
  const chunks = await readBodyChunks(c, LIMITS.maxRequestBytes);
  // A body over the batch limit is the item's own too_large (as for JSON); only the request limit bounds a frame here.
  // Split over the chunks as they arrived: each batch body stays views into them, hashed, scanned and stored unjoined.
  const frames = decodeFrameChunks(chunks, { maxFrames: maxItems, maxBodyBytes: LIMITS.maxRequestBytes });
  if (frames.length === 0) throw new SessyncError('bad_input', `${what}: the frames body holds no batch`);
  return frames.map((f, i): PushItem => {
    const parsed = parseFrameHeader(f.header);
    if (!parsed.ok) return { ok: false, error: new SessyncError('bad_input', `${what}: frame ${i}: ${describeIssues(parsed.error)}`) };
    const push: BatchPush = { envelope: parsed.data.envelope, body: f.parts.length === 1 ? f.parts[0]! : f.parts, base64: false };
    if (parsed.data.meta !== undefined) push.meta = parsed.data.meta;
    return { ok: true, push };
  });
}

/** The one batch of POST /v1/sessions/:session/batches: a single frame, or the JSON PushBatchRequest. */
export async function readSinglePush(c: Context, what: string): Promise<BatchPush> {
  if (!isFramesRequest(c)) return jsonPush(parseJson(await readBodyText(c, LIMITS.maxRequestBytes), PushBatchRequestSchema, what));
  const items = await readPushItems(c, what, 1);
  const item = items[0]!;
  if (!item.ok) throw item.error;
  return item.push;
}
