// Reads a frames answer to a pull (shared/wire.ts, PullBatchFrameHeaderSchema) into each session's page, or refuses it whole.
import { decodeFrames } from '../../shared/batch-frames.js';
import { SessyncError } from '../../shared/errors.js';
import { LIMITS, type PulledBatchIn, type PullPageItem } from '../../shared/wire.js';
import { parseBatchHeader, parseEndHeader } from './pull-frame-header.js';
import type { z } from 'zod';

/**
 * Bytes of one pulled body. Generous on purpose: an older server limited a JSON body by its characters (up to three
 * UTF-8 bytes each), and a sealed body an older client pushed is base64 text; a body is never refused for a size
 * some server once stored.
 */
const MAX_BODY_BYTES = 3 * LIMITS.maxBatchBytes;

/**
 * The pages of `sessions`, in their order, from a frames answer. Anything that breaks the format refuses the whole
 * answer (`wrong_server`, nothing of it is handed on, so nothing of it is written): a body that does not decode
 * (cut short, a length that lies, a header that is not JSON), a header of neither kind, a session other than the
 * next one asked for, batches not followed by their session's end frame, or a session missing at the end.
 */
export function readPullFrames(bytes: Uint8Array, sessions: readonly string[], where: string): PullPageItem[] {
  const refuse = (why: string) => new SessyncError('wrong_server', `${where}: the server's frames answer is malformed (${why}); nothing of it was used`);
  let frames;
  try {
    frames = decodeFrames(bytes, { maxFrames: sessions.length * (LIMITS.maxBatchesPerPull + 1), maxBodyBytes: MAX_BODY_BYTES });
  } catch (e) {
    throw refuse((e as Error).message);
  }
  const items: PullPageItem[] = [];
  let batches: PulledBatchIn[] = [];
  for (const [i, f] of frames.entries()) {
    const expected = sessions[items.length];
    if (expected === undefined) throw refuse(`frame ${i} comes after the last session asked for`);
    if ('envelope' in f.header) {
      const h = parseBatchHeader(f.header); // the direct check, zod where it is not certain
      if (!h.success) throw refuse(`frame ${i} is not a pulled batch: ${describeZod(h.error)}`);
      if (h.data.session !== expected) throw refuse(`frame ${i} is a batch of session ${h.data.session}, expected one of ${expected}`);
      const { session: _, ...batch } = h.data;
      batches.push({ ...batch, body: f.body });
      continue;
    }
    const end = parseEndHeader(f.header);
    if (!end.success) throw refuse(`frame ${i} is neither a pulled batch nor a session's end: ${describeZod(end.error)}`);
    if (end.data.session !== expected) throw refuse(`frame ${i} ends session ${end.data.session}, expected ${expected}`);
    if (!end.data.ok && batches.length > 0) throw refuse(`frame ${i} ends session ${expected} with an error after ${batches.length} batch(es)`);
    items.push(end.data.ok ? { ...end.data, batches } : end.data);
    batches = [];
  }
  if (items.length < sessions.length) {
    throw refuse(batches.length > 0 ? `session ${sessions[items.length]}'s batches have no end frame (cut short?)` : `it ends after ${items.length} of ${sessions.length} sessions`);
  }
  return items;
}

/** The first issue of a refused header, as `path: message`. */
function describeZod(e: z.ZodError): string {
  const i = e.issues[0];
  return i ? `${i.path.join('.') || '(header)'}: ${i.message}` : 'invalid';
}
