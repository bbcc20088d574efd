// Pieces of a direct check of a JSON header that is certain its zod schema accepts it: each says no to anything unsure.
import { LIMITS, NAME_RE, type BatchEnvelope } from './wire.js';

type Obj = Record<string, unknown>;

export const SHA256_HEX_RE = /^[0-9a-f]{64}$/;
const MAX_SEQ = 999_999_999_999;

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether every own key of `o` is one of `allowed` (a strict zod object refuses any other; a stripping one drops it, which a direct check does not copy). */
export function onlyKeys(o: Obj, allowed: readonly string[]): boolean {
  for (const k in o) if (!allowed.includes(k)) return false;
  return true;
}

export function isName(v: unknown): v is string {
  return typeof v === 'string' && NAME_RE.test(v);
}

export function isIntIn(v: unknown, min: number, max: number): v is number {
  return Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
}

// The envelope, as both a push frame (worker/frame-header.ts) and a pull frame (cli/sync/pull-frame-header.ts) carry it.
const ENVELOPE_KEYS = ['session', 'host', 'seq', 'batchId', 'entryCount', 'sha256', 'encoding'] as const;

/** BatchEnvelopeSchema's parse of `v` when it certainly passes (a new object, keys in the schema's order), else null. */
export function envelopeOf(v: unknown): BatchEnvelope | null {
  if (!isObject(v) || !onlyKeys(v, ENVELOPE_KEYS)) return null;
  const { session, host, seq, batchId, entryCount, sha256, encoding } = v;
  if (!isName(session) || !isName(host) || !isName(batchId) || !isIntIn(seq, 1, MAX_SEQ) || !isIntIn(entryCount, 0, LIMITS.maxEntriesPerBatch)) return null;
  if (typeof sha256 !== 'string' || !SHA256_HEX_RE.test(sha256) || (encoding !== 'jsonl' && encoding !== 'aes-256-gcm')) return null;
  return { session, host, seq, batchId, entryCount, sha256, encoding };
}

export function stringIn(v: unknown, min: number, max: number): v is string {
  return typeof v === 'string' && v.length >= min && v.length <= max;
}
