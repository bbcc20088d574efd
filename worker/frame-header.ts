// A push frame's header read without zod when a direct check is certain PushFrameHeaderSchema accepts it (the common case).
import type { z } from 'zod';
import { isBase64, LIMITS, PushFrameHeaderSchema, type AnySessionMetaInput, type BatchEnvelope } from '../shared/wire.js';
import { SHA256_HEX_RE, envelopeOf, isName, isObject, onlyKeys, stringIn } from '../shared/header-checks.js';

/** What a push needs of a frame header: its envelope and meta, as PushFrameHeaderSchema's parse gives them. */
export interface FrameHeaderFields {
  envelope: BatchEnvelope;
  meta?: AnySessionMetaInput;
}

type Obj = Record<string, unknown>;

/** The meta schemas' parse of `v` when it certainly passes (plaintext or sealed; new objects, as zod makes them), else null. */
function metaOf(v: unknown): AnySessionMetaInput | null {
  if (!isObject(v)) return null;
  if ('sealed' in v) {
    if (!onlyKeys(v, ['projectKey', 'sealed'])) return null;
    const { projectKey, sealed } = v;
    if (typeof projectKey !== 'string' || !SHA256_HEX_RE.test(projectKey) || !isObject(sealed) || !onlyKeys(sealed, ['keyId', 'wrappedKey', 'ciphertext'])) return null;
    const { keyId, wrappedKey, ciphertext } = sealed;
    if (!isName(keyId) || !stringIn(wrappedKey, 1, LIMITS.maxWrappedKeyChars) || !isBase64(wrappedKey) || !stringIn(ciphertext, 1, LIMITS.maxSealedMetaChars) || !isBase64(ciphertext)) return null;
    return { projectKey, sealed: { keyId, wrappedKey, ciphertext } };
  }
  if (!onlyKeys(v, ['header', 'projectKey', 'name'])) return null;
  const { header, projectKey, name } = v;
  if (!isObject(header) || !stringIn(projectKey, 1, 1000) || (name !== undefined && !stringIn(name, 0, 1000))) return null;
  // z.record copies the object, keys in their order; the values are the same.
  const meta: AnySessionMetaInput = { header: { ...header }, projectKey };
  if (name !== undefined) meta.name = name;
  return meta;
}

/**
 * The envelope and meta of a decoded frame header (a fresh JSON.parse object, `__proto__` already refused), as
 * PushFrameHeaderSchema's parse gives them, or why it is refused. Zod costs a first push (a thousand headers in a
 * fresh server) about 40 ms before it is warm; the direct check costs a fraction of that and decides alone only when
 * it is certain: anything it does not accept goes to the schema, which also words the error.
 */
export function parseFrameHeader(h: Obj): { ok: true; data: FrameHeaderFields } | { ok: false; error: z.ZodError } {
  const fast = directFrameHeader(h);
  if (fast) return { ok: true, data: fast };
  const parsed = PushFrameHeaderSchema.safeParse(h);
  if (!parsed.success) return { ok: false, error: parsed.error };
  const data: FrameHeaderFields = { envelope: parsed.data.envelope };
  if (parsed.data.meta !== undefined) data.meta = parsed.data.meta;
  return { ok: true, data };
}

/** The direct check alone (null: not certain); exported for the test that holds it to the schema. */
export function directFrameHeader(h: Obj): FrameHeaderFields | null {
  if (!onlyKeys(h, ['envelope', 'meta', 'bytes']) || !Number.isSafeInteger(h.bytes) || (h.bytes as number) < 0) return null;
  const envelope = envelopeOf(h.envelope);
  if (!envelope) return null;
  if (!('meta' in h)) return { envelope };
  const meta = metaOf(h.meta);
  return meta ? { envelope, meta } : null;
}
