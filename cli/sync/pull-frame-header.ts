// A pull frame's header read without zod when a direct check is certain the schema accepts it (the common case).
import type { z } from 'zod';
import { envelopeOf, isIntIn, isName, isObject, onlyKeys, stringIn } from '../../shared/header-checks.js';
import { isBase64, LIMITS, PullBatchFrameHeaderSchema, PullEndFrameHeaderSchema, type PullBatchFrameHeader, type SessionMetaResponse } from '../../shared/wire.js';

type Obj = Record<string, unknown>;
export type PullEndFrameHeader = z.infer<typeof PullEndFrameHeaderSchema>;
type Parsed<T> = { success: true; data: T } | { success: false; error: z.ZodError };

const BATCH_KEYS = ['envelope', 'received', 'damaged', 'session', 'base64', 'bytes'] as const;

/** PullBatchFrameHeaderSchema's parse when certain (keys in the schema's order, `bytes` dropped as zod drops it), else null. */
export function directBatchHeader(h: Obj): PullBatchFrameHeader | null {
  if (!onlyKeys(h, BATCH_KEYS)) return null;
  const { received, damaged, session, base64 } = h;
  const envelope = envelopeOf(h.envelope);
  if (!envelope || !isName(session)) return null;
  if (received !== undefined && !isIntIn(received, 0, Number.MAX_SAFE_INTEGER)) return null;
  if (damaged !== undefined && (typeof damaged !== 'string' || damaged.length > 300)) return null;
  if (base64 !== undefined && base64 !== true) return null;
  // Rebuilt in the schema's key order: envelope, received, damaged, session, base64.
  const out: Obj = { envelope };
  if (received !== undefined) out.received = received;
  if (damaged !== undefined) out.damaged = damaged;
  out.session = session;
  if (base64 !== undefined) out.base64 = base64;
  return out as PullBatchFrameHeader;
}

/** A z.record(string, int) parse when certain: a copy, keys in their order. */
function intRecordOf(v: unknown, keyOk: (k: string) => boolean, min: number): Record<string, number> | null {
  if (!isObject(v)) return null;
  const out: Record<string, number> = {};
  for (const k in v) {
    const n = v[k];
    if (!keyOk(k) || !isIntIn(n, min, Number.MAX_SAFE_INTEGER)) return null;
    out[k] = n;
  }
  return out;
}

const META_KEYS = ['session', 'header', 'sealed', 'projectKey', 'cwd', 'name', 'created', 'hosts'] as const;
const SEALED_KEYS = ['keyId', 'wrappedKey', 'ciphertext'] as const;

/** SessionMetaResponseSchema's parse when certain (new objects in the schema's key order), else null. */
function metaOf(v: unknown): SessionMetaResponse | null {
  if (!isObject(v) || !onlyKeys(v, META_KEYS)) return null;
  const { session, header, sealed, projectKey, cwd, name, created } = v;
  if (typeof session !== 'string' || typeof projectKey !== 'string' || typeof created !== 'string') return null;
  if ((cwd !== undefined && typeof cwd !== 'string') || (name !== undefined && typeof name !== 'string')) return null;
  if (header !== undefined && !isObject(header)) return null;
  const hosts = intRecordOf(v.hosts, () => true, Number.MIN_SAFE_INTEGER);
  if (!hosts) return null;
  const meta: Obj = { session };
  if (header !== undefined) meta.header = { ...header };
  if (sealed !== undefined) {
    if (!isObject(sealed) || !onlyKeys(sealed, SEALED_KEYS)) return null;
    const { keyId, wrappedKey, ciphertext } = sealed;
    if (!isName(keyId) || !stringIn(wrappedKey, 1, LIMITS.maxWrappedKeyChars) || !isBase64(wrappedKey) || !stringIn(ciphertext, 1, LIMITS.maxSealedMetaChars) || !isBase64(ciphertext)) return null;
    meta.sealed = { keyId, wrappedKey, ciphertext };
  }
  meta.projectKey = projectKey;
  if (cwd !== undefined) meta.cwd = cwd;
  if (name !== undefined) meta.name = name;
  meta.created = created;
  meta.hosts = hosts;
  return meta as SessionMetaResponse;
}

const END_KEYS = ['cursor', 'more', 'meta', 'ok', 'session', 'bytes'] as const;

/** PullEndFrameHeaderSchema's parse of a session's `ok: true` end when certain, else null (errors always go to zod). */
export function directEndHeader(h: Obj): PullEndFrameHeader | null {
  if (h.ok !== true || !onlyKeys(h, END_KEYS) || typeof h.more !== 'boolean' || typeof h.session !== 'string') return null;
  const cursor = intRecordOf(h.cursor, isName, 0);
  if (!cursor || Object.keys(cursor).length > LIMITS.maxCursorHosts) return null;
  const out: Obj = { cursor, more: h.more };
  if (h.meta !== undefined) {
    const meta = metaOf(h.meta);
    if (!meta) return null;
    out.meta = meta;
  }
  out.ok = true;
  out.session = h.session;
  return out as PullEndFrameHeader;
}

/**
 * The schemas' parse of a batch frame's header, the direct check first. Zod costs a pull of a thousand sessions in a
 * fresh process tens of ms before it is warm; the direct check decides alone only when it is certain: anything it
 * does not accept goes to the schema, which also words the error.
 */
export function parseBatchHeader(h: Obj): Parsed<PullBatchFrameHeader> {
  const fast = directBatchHeader(h);
  return fast ? { success: true, data: fast } : PullBatchFrameHeaderSchema.safeParse(h);
}

/** parseBatchHeader's counterpart for a session's end frame. */
export function parseEndHeader(h: Obj): Parsed<PullEndFrameHeader> {
  const fast = directEndHeader(h);
  return fast ? { success: true, data: fast } : PullEndFrameHeaderSchema.safeParse(h);
}
