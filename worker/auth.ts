// Bearer-token auth: tokens are stored only as their SHA-256; admin calls check the admin secret in constant time.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { NAME_RE } from '../shared/wire.js';
import { constantTimeEqual } from './sha256.js';
import { adminSecretProblem } from './admin-secret.js';
import { issueTokenRecord, lookupToken, touchToken } from './tokens.js';

export { newToken } from './tokens.js';
export type { TokenRecord } from './tokens.js';

/** What keys.account(id) holds. */
export interface AccountRecord {
  account: string;
  name?: string;
  created: string;
}

const encoder = new TextEncoder();

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
export async function issueToken(store: BlobStore, account: string, name?: string): Promise<string> {
  return (await issueTokenRecord(store, account, name)).token;
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

/** Resolves a bearer token to its account, or null when no such token is stored (or it was revoked). */
export async function accountOfToken(store: BlobStore, token: string): Promise<string | null> {
  const t = await lookupToken(store, token);
  return t.ok ? t.account : null;
}

/** Sets c.var.account (and tokenId) from the bearer token; 401 for a missing, unknown or revoked token. */
export const requireAccount: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerOf(c);
  if (!token) throw new SessyncError('unauthorized', 'missing bearer token: send "Authorization: Bearer <token>" (run `sessync login <url> --token T`)');
  const t = await lookupToken(c.var.store, token);
  if (!t.ok && t.revoked) throw revokedError(t.revoked);
  if (!t.ok) throw new SessyncError('unauthorized', 'token not recognised by this server: check the token or log in again');
  c.set('account', t.account);
  c.set('tokenId', t.id);
  await next();
  // After the route, and only for an answer that is not an error: a refused request stores nothing, not even this.
  // The route has done its work (and on Node a pull answer may already be on the wire), so a mark that cannot be
  // written is said in the log and does not turn the answer into an error: it is tried again on the next request.
  if (c.res.status < 400) {
    await touchToken(c.var.store, t).catch((e: unknown) => {
      console.error(`sessync: could not mark token ${t.id} as used today (the request itself succeeded): ${(e as Error)?.message ?? String(e)}`);
    });
  }
};

function revokedError(r: { at: string; id: string; name?: string }): SessyncError {
  const which = r.name === undefined ? r.id : `${r.id} ("${r.name}")`;
  return new SessyncError('unauthorized', `token ${which} was revoked at ${r.at}: log in again with a valid token (local sessions and unpushed entries are kept)`, {
    details: { revoked: r.at, tokenId: r.id },
  });
}

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
