// Reading a session's stored state (heads, batches, meta) through the BlobStore; shared by the session routes.
import type { Context } from 'hono';
import type { BlobBody, BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import { keys, parseHeadKey } from '../shared/keys.js';
import { findTooDeepText } from '../shared/json-limits.js';
import { concatChunks, decodeFrames, encodeFrameParts, hasFramesMagic } from '../shared/batch-frames.js';
import { fromBase64, toBase64 } from '../shared/sync-crypto.js';
import { LIMITS, NAME_RE, SealedMetaSchema, StoredBatchSchema, type BatchEnvelope, type SealedMeta, type StoredBatch } from '../shared/wire.js';
import { z } from 'zod';
import { sha256Hex } from './sha256.js';

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

/**
 * A stored batch as read: its envelope and its body's bytes as stored (a view into the object, not a copy).
 * Records are written binary: the frames magic line, one header line `{"envelope":...,"base64"?:true,...,"bytes":n}`
 * and the n body bytes (shared/batch-frames.ts, one frame). An older server's JSON record `{"envelope":...,"body":"..."}`
 * starts with `{`, never with the magic, and is still read.
 */
export interface StoredBatchRecord {
  envelope: BatchEnvelope;
  /** JSONL as UTF-8; for aes-256-gcm the raw sealed bytes (nonce, ciphertext, tag), or with `base64` that text. */
  body: Uint8Array;
  /**
   * An aes-256-gcm body held as base64 text: pushed as JSON (an older client) or stored by an older server. Its
   * envelope.sha256 is then of that text, as it was pushed; of a raw body it is of the raw bytes.
   */
  base64: boolean;
  /** Which record form the object is: binary (this server) or JSON (an older one). */
  form: 'frames' | 'json';
  /** The record's other fields (what a later server version adds, such as a clock), passed on as they are. */
  fields: Record<string, unknown>;
}

export function isDamaged(b: StoredBatchRecord | DamagedBatch | null): b is DamagedBatch {
  return b !== null && 'damaged' in b;
}

/** Bytes a batch counts for the quota: its body as stored; a damaged one counts what it occupies. */
export function batchBytes(b: Pick<StoredBatchRecord, 'body'> | DamagedBatch | null): number {
  if (b === null) return 0;
  return 'damaged' in b ? b.bytes : b.body.byteLength;
}

const StoredHeaderSchema = StoredBatchSchema.omit({ body: true });

/** Record header keys that the codec itself owns; everything else in a header is one of `fields`. */
const OWN_KEYS = new Set(['envelope', 'bytes', 'base64', 'body']);

/** The binary record of a batch: its body one buffer or in parts (a frames push as received). */
type BatchRecordInput = Pick<StoredBatchRecord, 'envelope' | 'base64'> & { body: BlobBody; fields?: Record<string, unknown> };

/**
 * A batch record as the parts a store writes (magic and header lines, then the body itself): the body is not copied
 * into one buffer with its header (for a megabyte ciphertext batch that copy was about a fifth of its push's CPU).
 */
export function batchRecordParts(b: BatchRecordInput): Uint8Array[] {
  const header: Record<string, unknown> = { ...(b.fields ?? {}), envelope: b.envelope };
  if (b.base64) header.base64 = true;
  return encodeFrameParts(header, Array.isArray(b.body) ? b.body : [b.body as Uint8Array]);
}

/** A batch record as one buffer (what a stored record's bytes are). */
export function encodeBatchRecord(b: BatchRecordInput): Uint8Array {
  return concatChunks(batchRecordParts(b));
}

function otherFields(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!OWN_KEYS.has(k)) out[k] = v;
  return out;
}

/** A stored object as a batch record, or why it is damaged. */
export function decodeBatchRecord(body: Uint8Array): StoredBatchRecord | DamagedBatch {
  if (hasFramesMagic(body)) {
    let frames;
    try {
      frames = decodeFrames(body, { maxFrames: 1, maxBodyBytes: body.byteLength });
    } catch (e) {
      return { damaged: `the stored record is cut or malformed (${(e as Error).message.slice(0, 120)})`, bytes: body.byteLength };
    }
    const f = frames[0];
    // The JSON record's schema without its body: the same envelope and fields (such as `received`) are checked.
    const head = f ? StoredHeaderSchema.safeParse(f.header) : null;
    if (!f || !head?.success || (f.header.base64 !== undefined && f.header.base64 !== true)) return { damaged: 'the stored record does not match the batch schema', bytes: body.byteLength };
    const base64 = f.header.base64 === true;
    if (base64 && head.data.envelope.encoding !== 'aes-256-gcm') return { damaged: 'the stored record marks a jsonl body as base64', bytes: body.byteLength };
    return { envelope: head.data.envelope, body: f.body, base64, form: 'frames', fields: otherFields(f.header) };
  }
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch (e) {
    return { damaged: `the stored object is not JSON (${(e as Error).message.slice(0, 120)})`, bytes: body.byteLength };
  }
  const parsed = StoredBatchSchema.safeParse(value);
  if (!parsed.success) return { damaged: 'the stored object does not match the batch schema', bytes: body.byteLength };
  // An older server's record: a sealed body there is always base64 text.
  return { envelope: parsed.data.envelope, body: encoder.encode(parsed.data.body), base64: parsed.data.envelope.encoding === 'aes-256-gcm', form: 'json', fields: otherFields(value as Record<string, unknown>) };
}

/** The batch at `key`; null when absent; a DamagedBatch when the object does not parse or is not a batch. Either record form. */
export async function readBatch(store: BlobStore, key: string): Promise<StoredBatchRecord | DamagedBatch | null> {
  const obj = await store.get(key);
  return obj ? decodeBatchRecord(obj.body) : null;
}

/** Node's Buffer where there is one (native base64, several times the speed of btoa over chunks), else the web one. */
const NodeBuffer = (globalThis as { Buffer?: { from(b: ArrayBufferLike, offset: number, length: number): { toString(enc: 'base64'): string } } }).Buffer;
function base64Of(bytes: Uint8Array): string {
  return NodeBuffer ? NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') : toBase64(bytes);
}

/** The raw sealed bytes of an aes-256-gcm record, whichever way it holds them (a base64 one is decoded: a copy). */
export function rawSealedBytes(b: Pick<StoredBatchRecord, 'envelope' | 'body' | 'base64'>): Uint8Array {
  return b.base64 ? fromBase64(decoder.decode(b.body), `batch ${b.envelope.seq} of host ${b.envelope.host}`) : b.body;
}

/**
 * A record as JSON carries it (a JSON pull answer, for clients that do not take frames): the body as a string, with
 * the envelope that matches it. A raw sealed body becomes base64 and its sha256 that of the base64 text, the text an
 * older client hashes; the sha256 is no part of what the seal binds, so the batch still opens.
 */
export async function asJsonBatch(b: StoredBatchRecord): Promise<StoredBatch & Record<string, unknown>> {
  if (b.envelope.encoding !== 'aes-256-gcm' || b.base64) return { ...b.fields, envelope: b.envelope, body: decoder.decode(b.body) };
  const text = base64Of(b.body);
  return { ...b.fields, envelope: { ...b.envelope, sha256: await sha256Hex(text) }, body: text };
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
