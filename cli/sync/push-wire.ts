// A client's push as it goes on the wire: a frame (raw body bytes) for servers that take frames, or JSON for older ones.
import { createHash } from 'node:crypto';
import type { Frame } from '../../shared/batch-frames.js';
import { SessyncError } from '../../shared/errors.js';
import type { PushBatchItem, PushBatchRequest } from '../../shared/wire.js';

function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function head(item: PushBatchItem): Record<string, unknown> {
  return item.meta === undefined ? { envelope: item.envelope } : { envelope: item.envelope, meta: item.meta };
}

/**
 * The item as a frame. JSONL goes as its UTF-8 (same sha-256); raw sealed bytes as they are. A sealed body still held
 * as base64 text (written down by an older sessync, sha-256 of the text) goes raw as well, with the sha-256 of the raw
 * bytes: the server knows a batch stored as base64 from a raw one and answers the resend `exists`.
 */
export function toFrame(item: PushBatchItem): Frame {
  if (typeof item.body !== 'string') return { header: head(item), body: item.body };
  if (item.envelope.encoding !== 'aes-256-gcm') return { header: head(item), body: Buffer.from(item.body, 'utf8') };
  // The server checked the text against its sha-256; the raw bytes get a new one, so the text is checked here first.
  if (sha256Hex(item.body) !== item.envelope.sha256) {
    throw new SessyncError('bad_input', `batch ${item.envelope.seq} of session ${item.envelope.session}: its sealed body (base64, written by an older sessync) does not match its sha-256`);
  }
  const raw = Buffer.from(item.body, 'base64');
  return { header: { ...head(item), envelope: { ...item.envelope, sha256: sha256Hex(raw) } }, body: raw };
}

/**
 * The item as JSON, for a server from before frames: a raw sealed body becomes base64 text with the sha-256 of that
 * text (the seal binds no hash, so the batch opens all the same); the same bytes always give the same request, so a
 * resend is still `exists`.
 */
export function toJsonRequest(item: PushBatchItem): PushBatchRequest {
  const { body, ...rest } = item;
  if (typeof body === 'string') return { ...rest, body };
  if (item.envelope.encoding !== 'aes-256-gcm') return { ...rest, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') };
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64');
  return { ...rest, envelope: { ...item.envelope, sha256: sha256Hex(text) }, body: text };
}

/** Bytes the item adds to a frames request, near enough to fill requests up to their limit (the header is small). */
export function frameBytes(item: PushBatchItem): number {
  const body = typeof item.body !== 'string' ? item.body.byteLength : item.envelope.encoding === 'aes-256-gcm' ? Math.ceil((item.body.length * 3) / 4) : Buffer.byteLength(item.body);
  return body + Buffer.byteLength(JSON.stringify(head(item))) + 32;
}
