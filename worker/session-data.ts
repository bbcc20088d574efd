// Reading a session's stored state (heads, batches, meta) through the BlobStore; shared by the session routes.
import type { Context } from 'hono';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import { keys, parseHeadKey } from '../shared/keys.js';
import { NAME_RE, StoredBatchSchema, type StoredBatch } from '../shared/wire.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** What keys.sessionMeta holds: the client's meta as first pushed, plus the time it was stored. */
export interface StoredMeta {
  header: Record<string, unknown>;
  projectKey: string;
  name?: string;
  created: string;
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

export async function readBatch(store: BlobStore, key: string): Promise<StoredBatch | null> {
  const obj = await store.get(key);
  if (!obj) return null;
  const parsed = StoredBatchSchema.safeParse(decodeJson(key, obj.body));
  if (!parsed.success) throw new SessyncError('internal', `stored batch ${key} does not match the batch schema`);
  return parsed.data;
}

export async function readMeta(store: BlobStore, account: string, session: string): Promise<StoredMeta | null> {
  const key = keys.sessionMeta(account, session);
  const obj = await store.get(key);
  return obj ? (decodeJson(key, obj.body) as StoredMeta) : null;
}

export function notFoundSession(session: string): SessyncError {
  // Identical for a missing session and another account's session: existence must not leak.
  return new SessyncError('not_found', `session ${session} not found on this server`);
}
