// Reading a session's stored state (heads, batches, meta) through the BlobStore; shared by the session routes.
import type { Context } from 'hono';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import { keys, parseHeadKey } from '../shared/keys.js';
import { findTooDeepText } from '../shared/json-limits.js';
import { LIMITS, NAME_RE, SealedMetaSchema, StoredBatchSchema, type SealedMeta, type StoredBatch } from '../shared/wire.js';
import { z } from 'zod';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** What keys.sessionMeta holds for a plaintext session: the client's meta as first pushed, plus the time it was stored. */
export interface StoredPlainMeta {
  header: Record<string, unknown>;
  projectKey: string;
  name?: string;
  created: string;
}

/** An end-to-end encrypted session's meta: the keyed project hash and the sealed part, opaque to the server. */
export interface StoredSealedMeta {
  projectKey: string;
  sealed: SealedMeta;
  created: string;
}

export type StoredMeta = StoredPlainMeta | StoredSealedMeta;

export function isSealedMeta(m: StoredMeta): m is StoredSealedMeta {
  return 'sealed' in m;
}

/** A name taken from the URL (session, host, account), checked before it can reach an object key. */
export function nameParam(c: Context, param: string, what: string): string {
  const v = c.req.param(param) ?? '';
  if (!NAME_RE.test(v)) {
    const shown = JSON.stringify(v.slice(0, 80));
    throw new SessyncError('bad_input', `${what} ${shown} is not valid: letters, digits, - and _ only, at most 128 characters`);
  }
  return v;
}

export function encodeJson(v: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(v));
}

export function decodeJson(key: string, body: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(body));
  } catch (e) {
    throw new SessyncError('internal', `stored object ${key} is unreadable: ${(e as Error).message}`);
  }
}

/** Every key under `prefix`, following the store's pages. */
export async function listAll(store: BlobStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(cursor === undefined ? { prefix } : { prefix, cursor });
    out.push(...page.keys);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return out;
}

/** Whether `key` exists, without downloading it (keys have fixed-width seqs, so the key is its own only match). */
export async function keyExists(store: BlobStore, key: string): Promise<boolean> {
  const page = await store.list({ prefix: key, limit: 1 });
  return page.keys[0] === key;
}

/** Highest stored seq per host of one session (empty map: the session does not exist for this account). */
export async function sessionHeads(store: BlobStore, account: string, session: string): Promise<Map<string, number>> {
  const heads = new Map<string, number>();
  for (const key of await listAll(store, keys.sessionHeadsPrefix(account, session))) {
    const h = parseHeadKey(account, key);
    if (!h || h.session !== session) continue; // a key under the prefix that is not a head is not ours to interpret
    if ((heads.get(h.host) ?? 0) < h.seq) heads.set(h.host, h.seq);
  }
  return heads;
}

/** A stored batch object that an older server wrote damaged: served as damaged (host and seq), never a 5xx. */
export interface DamagedBatch {
  damaged: string;
  /** Bytes of the stored object, for quota accounting. */
  bytes: number;
}

export function isDamaged(b: StoredBatch | DamagedBatch | null): b is DamagedBatch {
  return b !== null && 'damaged' in b;
}

/** Bytes a batch counts for the quota: its body's UTF-8; a damaged one counts what it occupies. */
export function batchBytes(b: StoredBatch | DamagedBatch | null): number {
  if (b === null) return 0;
  return isDamaged(b) ? b.bytes : encoder.encode(b.body).length;
}

/** The batch at `key`; null when absent; a DamagedBatch when the object does not parse or is not a batch. */
export async function readBatch(store: BlobStore, key: string): Promise<StoredBatch | DamagedBatch | null> {
  const obj = await store.get(key);
  if (!obj) return null;
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(obj.body));
  } catch (e) {
    return { damaged: `the stored object is not JSON (${(e as Error).message.slice(0, 120)})`, bytes: obj.body.length };
  }
  const parsed = StoredBatchSchema.safeParse(value);
  if (!parsed.success) return { damaged: 'the stored object does not match the batch schema', bytes: obj.body.length };
  return parsed.data;
}

/** What a stored meta must look like to be served; zod drops unknown keys, so only these reach an answer. */
const StoredMetaSchema = z.union([
  z.object({ projectKey: z.string(), sealed: SealedMetaSchema, created: z.string() }),
  z.object({
    header: z.record(z.string(), z.unknown()),
    projectKey: z.string(),
    name: z.string().optional(),
    created: z.string(),
  }),
]);

/**
 * The session's meta, or null. A meta an older server stored damaged (not JSON, not a meta, a header nested
 * deeper than LIMITS.maxJsonDepth, which no answer could carry) is a non-retryable `corrupt` for this session only.
 */
export async function readMeta(store: BlobStore, account: string, session: string): Promise<StoredMeta | null> {
  const key = keys.sessionMeta(account, session);
  const obj = await store.get(key);
  if (!obj) return null;
  const text = decoder.decode(obj.body);
  const damaged = (why: string) =>
    new SessyncError('corrupt', `session ${session}: the metadata stored on this server is damaged (${why}); the server cannot serve it; \`sessync rm ${session} --remote\` deletes it`, { retryable: false });
  // The meta object is level 1 and its header level 2, so the header's own limit is one more here.
  if (findTooDeepText(text, LIMITS.maxJsonDepth + 1)) throw damaged(`its header nests JSON deeper than ${LIMITS.maxJsonDepth} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw damaged(`not JSON: ${(e as Error).message.slice(0, 120)}`);
  }
  const parsed = StoredMetaSchema.safeParse(value);
  if (!parsed.success) throw damaged('not a session meta');
  return parsed.data as StoredMeta;
}

export function notFoundSession(session: string): SessyncError {
  // Identical for a missing session and another account's session: existence must not leak.
  return new SessyncError('not_found', `session ${session} not found on this server`);
}
