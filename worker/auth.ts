// Bearer-token auth: tokens are stored only as their SHA-256; admin calls check the admin secret in constant time.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { NAME_RE } from '../shared/wire.js';
import { constantTimeEqual, sha256Hex } from './sha256.js';
import { adminSecretProblem } from './admin-secret.js';

/** What keys.token(hash) holds. */
export interface TokenRecord {
  account: string;
  created: string;
}

/** What keys.account(id) holds. */
export interface AccountRecord {
  account: string;
  name?: string;
  created: string;
}

const TOKEN_PREFIX = 'sst_';
/** Longest bearer value worth hashing; anything longer is not one of ours. */
const MAX_BEARER = 512;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 256 random bits. */
export function newToken(): string {
  return TOKEN_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** A fresh account id (matches NAME_RE). */
export function newAccountId(): string {
  const hex = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
  return `acct-${hex}`;
}

/** The bearer value of the Authorization header, or null when there is none. */
export function bearerOf(c: Context): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw new SessyncError('unauthorized', 'Authorization header must be "Bearer <token>"');
  return m[1]!;
}

/** Stores a new token for `account` (only its hash) and returns the token itself, which is never stored. */
export async function issueToken(store: BlobStore, account: string): Promise<string> {
  const token = newToken();
  const record: TokenRecord = { account, created: new Date().toISOString() };
  const created = await store.putIfAbsent(keys.token(await sha256Hex(token)), encoder.encode(JSON.stringify(record)));
  // 256 random bits cannot collide in practice; if the store says otherwise something is badly wrong.
  if (!created) throw new SessyncError('internal', 'token collision: refusing to reuse a token record');
  return token;
}

/** Creates an account and its first token. */
export async function createAccount(store: BlobStore, name?: string): Promise<{ account: string; token: string }> {
  const account = newAccountId();
  const record: AccountRecord = name === undefined ? { account, created: new Date().toISOString() } : { account, name, created: new Date().toISOString() };
  if (!(await store.putIfAbsent(keys.account(account), encoder.encode(JSON.stringify(record))))) {
    throw new SessyncError('internal', 'account id collision: try again', { retryable: true });
  }
  return { account, token: await issueToken(store, account) };
}

export async function accountExists(store: BlobStore, account: string): Promise<boolean> {
  if (!NAME_RE.test(account)) return false;
  return (await store.get(keys.account(account))) !== null;
}

/** Resolves a bearer token to its account, or null when no such token is stored. */
export async function accountOfToken(store: BlobStore, token: string): Promise<string | null> {
  if (token.length > MAX_BEARER) return null;
  const obj = await store.get(keys.token(await sha256Hex(token)));
  if (!obj) return null;
  let rec: TokenRecord;
  try {
    rec = JSON.parse(decoder.decode(obj.body)) as TokenRecord;
  } catch (e) {
    throw new SessyncError('internal', `token record is unreadable: ${(e as Error).message}`);
  }
  return typeof rec.account === 'string' && NAME_RE.test(rec.account) ? rec.account : null;
}

/** Sets c.var.account from the bearer token; 401 for a missing or unknown token. */
export const requireAccount: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerOf(c);
  if (!token) throw new SessyncError('unauthorized', 'missing bearer token: send "Authorization: Bearer <token>" (run `sessync login <url> --token T`)');
  const account = await accountOfToken(c.var.store, token);
  if (!account) throw new SessyncError('unauthorized', 'token not recognised by this server: check the token or log in again');
  c.set('account', account);
  await next();
};

/** Admin calls: the bearer value must equal the admin secret. No secret configured means the admin API is off. */
export function requireAdmin(secretOf: (c: Context<AppEnv>) => string | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const secret = secretOf(c);
    if (!secret) throw new SessyncError('forbidden', 'the admin API is disabled: set SESSYNC_ADMIN_SECRET (env var, or `wrangler secret put`)');
    // Workers has no start-up to refuse: a weak secret from the binding keeps the admin API shut instead.
    const weak = adminSecretProblem(secret);
    if (weak) throw new SessyncError('forbidden', `the admin API is disabled: ${weak}, then \`wrangler secret put SESSYNC_ADMIN_SECRET\``);
    const given = bearerOf(c);
    if (!given) throw new SessyncError('unauthorized', 'missing admin secret: send "Authorization: Bearer <admin secret>"');
    if (!(await constantTimeEqual(given, secret))) throw new SessyncError('unauthorized', 'admin secret does not match');
    await next();
  };
}
