// Token records: issue, look up, list, revoke, and the once-a-day "last used" mark; only SHA-256s of tokens are stored.
import type { BlobStore } from './store/blob-store.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { NAME_RE, type TokenInfo } from '../shared/wire.js';
import { sha256Hex } from './sha256.js';
import { z } from 'zod';
import { readStoredRecord } from './stored-record.js';

/** What keys.token(hash) holds. `id` and `name` are absent in records written before tokens could be listed. */
export interface TokenRecord {
  account: string;
  created: string;
  id?: string;
  name?: string;
  /** Day (YYYY-MM-DD, UTC) of the last request made with the token; written at most once a day. */
  lastUsed?: string;
  /** Set when revoked: every request with the token is refused from then on, with this time in the message. */
  revoked?: string;
}

/** What keys.accountToken(account, id) holds: the account's index, for listing and revoking by id. */
export interface TokenIndexRecord {
  id: string;
  tokenHash: string;
  name?: string;
  created: string;
}

/** A looked-up token: its account and id, or why it is refused. */
export type TokenLookup =
  | { ok: true; account: string; id: string; hash: string; record: TokenRecord }
  | { ok: false; revoked?: { at: string; id: string; name?: string } };

/**
 * The stored forms, checked on every read: a record that is not one is damaged (see readStoredRecord). Passthrough,
 * because touchToken and revokeToken write a read record back and must keep fields a newer server added.
 */
const TokenRecordSchema: z.ZodType<TokenRecord> = z
  .object({ account: z.string().regex(NAME_RE), created: z.string(), id: z.string().optional(), name: z.string().optional(), lastUsed: z.string().optional(), revoked: z.string().optional() })
  .passthrough();
const TokenIndexRecordSchema: z.ZodType<TokenIndexRecord> = z
  .object({ id: z.string(), tokenHash: z.string().regex(/^[0-9a-f]{64}$/), name: z.string().optional(), created: z.string() })
  .passthrough();

/** What a damaged record of a token means for its owner, and how it is mended. */
const DAMAGED_TOKEN = "the server cannot tell whether the token is valid or revoked, so it refuses it: log in with another token of the account (revoking this one with `sessync tokens revoke <id>` replaces the record), or ask the server's admin for a new token";
/** Never answered as such: both readers fall back on the token record (readIndexOrRecover); kept for the log and any new reader. */
const DAMAGED_INDEX = "the token is read from the token record it names instead";

function readTokenRecord(store: BlobStore, hash: string): Promise<TokenRecord | null> {
  return readStoredRecord(store, keys.token(hash), TokenRecordSchema, 'token record', DAMAGED_TOKEN);
}

/** The token record, or null when absent or damaged: for the writes that replace it whole (a revocation), which mend it. */
async function readTokenRecordToReplace(store: BlobStore, hash: string): Promise<TokenRecord | null> {
  return readTokenRecord(store, hash).catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e)));
}

function readIndexRecord(store: BlobStore, key: string): Promise<TokenIndexRecord | null> {
  return readStoredRecord(store, key, TokenIndexRecordSchema, 'token index record', DAMAGED_INDEX);
}

/**
 * The index entry at `indexKey` (of token `id`), or, when that entry is damaged, the token record it named, found
 * without it: an id is `tok_` and the first 20 hex digits of the hash, the record's key `tokens/<hash>`. A record of
 * another account, damaged too or revoked is not taken. Null (logged) when none is found: then the token is refused
 * anyway, as an entry without a record is (a revocation that stopped half way). Without this one damaged entry would
 * keep the account from listing its tokens, so from revoking a lost machine's.
 */
async function readIndexOrRecover(store: BlobStore, account: string, indexKey: string, id: string): Promise<{ index: TokenIndexRecord; rec: TokenRecord | null } | null> {
  try {
    const index = await readIndexRecord(store, indexKey);
    return index && { index, rec: null };
  } catch (e) {
    if (!isSessyncError(e, 'corrupt')) throw e;
  }
  const found = TOKEN_ID_RE.test(id) ? await findRecordOfId(store, account, id) : null;
  console.error(
    found
      ? `sessync: the token index record at ${indexKey} is damaged: read from the token record at ${keys.token(found.index.tokenHash)} instead`
      : `sessync: the token index record at ${indexKey} is damaged and no live token record of account ${account} has id ${id}: left out (the token is refused)`,
  );
  return found;
}

/** `tokens/`, where keys.token puts every token record. */
const TOKEN_RECORDS_PREFIX = keys.token('0'.repeat(64)).slice(0, -64);

async function findRecordOfId(store: BlobStore, account: string, id: string): Promise<{ index: TokenIndexRecord; rec: TokenRecord } | null> {
  // 80 bits: one key in practice; a page of them is still read through, never trusted by prefix alone.
  const page = await store.list({ prefix: TOKEN_RECORDS_PREFIX + id.slice(4), limit: 10 });
  for (const key of page.keys) {
    const hash = key.slice(key.lastIndexOf('/') + 1);
    if (!/^[0-9a-f]{64}$/.test(hash) || tokenIdOf(hash) !== id) continue;
    const rec = await readTokenRecordToReplace(store, hash);
    if (!rec || rec.account !== account || rec.revoked) continue;
    const index: TokenIndexRecord = { id, tokenHash: hash, created: rec.created, ...(rec.name === undefined ? {} : { name: rec.name }) };
    return { index, rec };
  }
  return null;
}

const TOKEN_PREFIX = 'sst_';
/** Longest bearer value worth hashing; anything longer is not one of ours. */
const MAX_BEARER = 512;

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 256 random bits. */
export function newToken(): string {
  return TOKEN_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * A token's id, derived from its hash so that a record written before ids existed gets the same id from every
 * request that sees it. 80 bits of a SHA-256 say nothing usable about the token itself.
 */
export function tokenIdOf(hash: string): string {
  return `tok_${hash.slice(0, 20)}`;
}

export const TOKEN_ID_RE = /^tok_[0-9a-f]{20}$/;

function today(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 10);
}

function encode(v: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(v));
}


export interface IssuedToken {
  account: string;
  id: string;
  name?: string;
  created: string;
  token: string;
}

/** Stores a new token for `account`: the index entry first, so a failure in between never leaves a live token that cannot be listed or revoked. */
export async function issueTokenRecord(store: BlobStore, account: string, name?: string): Promise<IssuedToken> {
  const token = newToken();
  const hash = await sha256Hex(token);
  const id = tokenIdOf(hash);
  const created = new Date().toISOString();
  const named = name === undefined ? {} : { name };
  const index: TokenIndexRecord = { id, tokenHash: hash, created, ...named };
  // 256 random bits cannot collide in practice; if the store says otherwise something is badly wrong.
  if (!(await store.putIfAbsent(keys.accountToken(account, id), encode(index)))) throw new SessyncError('internal', 'token id collision: refusing to reuse a token record');
  const record: TokenRecord = { account, created, id, ...named };
  if (!(await store.putIfAbsent(keys.token(hash), encode(record)))) throw new SessyncError('internal', 'token collision: refusing to reuse a token record');
  return { account, id, created, token, ...named };
}

/** Resolves a bearer token: its account and id, a revocation, or unknown. */
export async function lookupToken(store: BlobStore, token: string): Promise<TokenLookup> {
  if (token.length > MAX_BEARER) return { ok: false };
  const hash = await sha256Hex(token);
  const rec = await readTokenRecord(store, hash);
  if (!rec) return { ok: false };
  const id = rec.id ?? tokenIdOf(hash);
  if (rec.revoked) return { ok: false, revoked: { at: rec.revoked, id, ...(rec.name === undefined ? {} : { name: rec.name }) } };
  return { ok: true, account: rec.account, id, hash, record: rec };
}

/**
 * Store calls touchToken may make at most (a record from before token ids, with a revocation racing): the index
 * entry's putIfAbsent, the record's write, the entry's read, the record's read and its write again. Every
 * authenticated request may pay them after its own, so a route that counts its calls leaves room for them.
 */
export const TOKEN_MARK_MAX_OPS = 5;

/**
 * Marks the token used today, at most one write a day per token (the record holds the day, which every request
 * reads anyway). A record from before token ids gets its id and index entry here. Returns false when a revocation
 * ran concurrently: the record just written would have undone it, so the revoked mark is put back.
 * A token revoked by this very request (`logout --revoke`) has no index entry any more: the same path keeps it revoked.
 */
export async function touchToken(store: BlobStore, t: Extract<TokenLookup, { ok: true }>, now = Date.now()): Promise<boolean> {
  const day = today(now);
  if (t.record.lastUsed === day && t.record.id !== undefined) return true;
  const indexKey = keys.accountToken(t.account, t.id);
  if (t.record.id === undefined) {
    const index: TokenIndexRecord = { id: t.id, tokenHash: t.hash, created: t.record.created };
    await store.putIfAbsent(indexKey, encode(index));
  }
  const updated: TokenRecord = { ...t.record, id: t.id, lastUsed: day };
  await store.put(keys.token(t.hash), encode(updated));
  // Revocation writes the revoked record, drops the index entry, then writes the revoked record again: if the index
  // is still here, that last write comes after ours; if it is gone, ours may have undone the first, so redo it.
  if (await store.get(indexKey)) return true;
  const again = await readTokenRecordToReplace(store, t.hash);
  await store.put(keys.token(t.hash), encode({ ...updated, revoked: again?.revoked ?? new Date(now).toISOString() }));
  return false;
}

/** The account's tokens, oldest first (ties by id, so every read lists them alike), `current` marking the one with id `currentId`. */
export async function listTokens(store: BlobStore, account: string, currentId?: string): Promise<TokenInfo[]> {
  const prefix = keys.accountTokensPrefix(account);
  const indexKeys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(cursor === undefined ? { prefix } : { prefix, cursor });
    indexKeys.push(...page.keys);
    cursor = page.cursor;
  } while (cursor !== undefined);
  const rows = await Promise.all(
    indexKeys.map(async (k) => {
      const entry = await readIndexOrRecover(store, account, k, k.slice(prefix.length));
      if (!entry) return null;
      const index = entry.index;
      // Damaged (logged by the read): the token is refused, but listed from its index entry so that it can be revoked,
      // which replaces the record.
      const rec = entry.rec ?? (await readTokenRecord(store, index.tokenHash).catch((e: unknown) => (isSessyncError(e, 'corrupt') ? ({ account, created: index.created } as TokenRecord) : Promise.reject(e))));
      // An index entry without a live record: a revocation that stopped half way (the token is already refused).
      if (!rec || rec.revoked) return null;
      const info: TokenInfo = { id: index.id, created: index.created, current: index.id === currentId };
      const name = rec.name ?? index.name;
      if (name !== undefined) info.name = name;
      if (rec.lastUsed !== undefined) info.lastUsed = rec.lastUsed;
      // The current token is in use right now; its mark is written after this answer.
      if (info.current) info.lastUsed = today();
      return info;
    }),
  );
  return rows.filter((r): r is TokenInfo => r !== null).sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Revokes one of the account's tokens by id; false when the account has no such token. The record is marked
 * first (the token is refused from that write on), the index entry dropped, then the mark written again (see touchToken).
 */
export async function revokeToken(store: BlobStore, account: string, id: string): Promise<boolean> {
  if (!TOKEN_ID_RE.test(id)) return false;
  const indexKey = keys.accountToken(account, id);
  // A damaged index entry: revoked through the record it named (of this account), and dropped below like any other.
  const entry = await readIndexOrRecover(store, account, indexKey, id);
  if (!entry) return false;
  const index = entry.index;
  const recordKey = keys.token(index.tokenHash);
  const rec = entry.rec ?? (await readTokenRecordToReplace(store, index.tokenHash));
  if (rec && rec.account !== account) return false;
  const revoked: TokenRecord = { ...(rec ?? { account, created: index.created }), id, revoked: rec?.revoked ?? new Date().toISOString() };
  await store.put(recordKey, encode(revoked));
  await store.delete(indexKey);
  await store.put(recordKey, encode(revoked));
  return true;
}
