// The account key of a sync run: checked against the server's key check before anything is written or sent, and the session keys under it.
import { join } from 'node:path';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import {
  deriveKeys,
  deriveSessionKey,
  keyCheck,
  openMeta,
  unwrapSessionKey,
  type AccountKey,
  type DerivedKeys,
  type SessionKey,
} from '../../shared/sync-crypto.js';
import type { AccountKeyResponse, SessionMetaResponse } from '../../shared/wire.js';
import type { ApiClient } from '../api-client.js';
import { readJsonOrNull, writeJsonAtomic } from '../store/atomic-json.js';
import type { SyncContext } from '../sync/sync-context.js';
import { loadKey } from './key-store.js';

/** What push and pull need on an encrypted account. Session keys are cached unwrapped in memory only. */
export interface E2eKeys {
  account: string;
  keys: DerivedKeys;
  /** In-memory only: an unwrapped key never touches the disk. */
  sessionKeys: Map<string, Promise<SessionKey>>;
}

/**
 * Per sync run: a sealed meta fetched to find a session's key, kept for the next readMeta of that session. A pull
 * that creates a session opens its first page (the key) and then places the file (the meta): one GET for both.
 */
const fetchedMetas = new WeakMap<SyncContext, Map<string, SessionMetaResponse>>();

export const IMPORT_HOW = 'on a machine that has the key run `sessync key export`, then here `sessync key import` and paste it (or `sessync key import --file F`)';

/** The account the token belongs to: saved at login, asked of the server for logins saved before that. */
export async function accountOf(api: ApiClient): Promise<string> {
  return api.account ?? (await api.whoami()).account;
}

/**
 * Compares the key this machine holds with the server's record. Throws, with what to run, when the account is
 * encrypted and the key here is missing, older (rotated elsewhere) or wrong; null for a plaintext account.
 */
export async function verifyKey(remote: AccountKeyResponse, local: AccountKey | null): Promise<DerivedKeys | null> {
  if (!remote.encrypted) return null;
  if (!local) {
    throw new SessyncError('forbidden', `this account is end-to-end encrypted (key ${remote.keyId}) and this machine does not have its key: ${IMPORT_HOW}. Nothing was synced.`);
  }
  if (local.keyId !== remote.keyId) {
    const retired = remote.retired.find((r) => r.keyId === local.keyId);
    const why = retired
      ? `the account key was rotated on another machine (this machine's key ${local.keyId} was retired ${retired.retiredAt}; the current one is ${remote.keyId})`
      : `this machine's key ${local.keyId} is not the account's key ${remote.keyId}`;
    throw new SessyncError('key_mismatch', `${why}: ${IMPORT_HOW}. Nothing was synced.`);
  }
  const keys = await deriveKeys(local);
  if ((await keyCheck(keys)) !== remote.check) {
    throw new SessyncError('key_mismatch', `this machine's key ${local.keyId} fails the server's key check (a wrong key under the right id): ${IMPORT_HOW}. Nothing was synced.`);
  }
  return keys;
}

/** The run's keys: one GET /v1/account/key, then the stored key checked against it; null on a plaintext account. */
export async function loadE2e(api: ApiClient, env: NodeJS.ProcessEnv): Promise<E2eKeys | null> {
  let remote: AccountKeyResponse;
  try {
    remote = await api.accountKey();
  } catch (e) {
    // A server from before end-to-end encryption has no key route: its accounts are all plaintext.
    if (isSessyncError(e, 'not_found')) return null;
    throw e;
  }
  if (!remote.encrypted) return null;
  const account = await accountOf(api);
  const stored = await loadKey(env, api.url, account);
  const keys = await verifyKey(remote, stored?.key ?? null);
  return keys && { account, keys, sessionKeys: new Map() };
}

/** A memoised loader: the first push or pull asks the server, the rest of the run reuses the answer (or the error). */
export function e2eLoader(api: ApiClient, env: NodeJS.ProcessEnv): () => Promise<E2eKeys | null> {
  let p: Promise<E2eKeys | null> | undefined;
  return () => (p ??= loadE2e(api, env));
}

interface WrappedKeyFile {
  keyId: string;
  wrappedKey: string;
}

/**
 * The wrapped key of a session, written down by this machine when the server's meta said another one than this
 * machine's (so a push started again seals under the stored key without asking), and by older clients before the
 * first sealed batch of a session they made (their random key: a batch pending since then is sealed under it).
 */
function wrappedKeyPath(ctx: SyncContext, session: string): string {
  return join(ctx.state.serverDir, 'session-keys', `${session}.json`);
}

async function serverMeta(ctx: SyncContext, session: string): Promise<SessionMetaResponse | null> {
  try {
    return await ctx.api.sessionMeta(session);
  } catch (e) {
    if (isSessyncError(e, 'not_found')) return null;
    throw e;
  }
}

interface KeyLookup {
  create: boolean;
  meta?: SessionMetaResponse;
  /** The wrapped key this machine wrote down for the session (its sync state's dataKey): no meta asked for. */
  known?: { keyId: string; wrappedKey: string } | undefined;
  /**
   * The caller sends the session's sealed meta with its first batch: the server refuses it when the stored meta
   * wraps another key (metaMismatch) or is still plaintext, before any write, so the meta is not asked for first.
   * That saves a round trip per new session.
   */
  announcing?: boolean;
}

/**
 * The data key of a session: in memory, else the server's meta (the truth once it is stored), else the one this
 * machine wrote down for it, else (create) the one derived for its id.
 */
export function sessionKey(ctx: SyncContext, e2e: E2eKeys, session: string, o: KeyLookup): Promise<SessionKey> {
  let p = e2e.sessionKeys.get(session);
  if (!p) {
    p = findSessionKey(ctx, e2e, session, o);
    e2e.sessionKeys.set(session, p);
    p.catch(() => e2e.sessionKeys.delete(session)); // a failure is not cached: the next call asks again
  }
  return p;
}

async function findSessionKey(ctx: SyncContext, e2e: E2eKeys, session: string, o: KeyLookup): Promise<SessionKey> {
  if (!o.meta && o.known?.keyId === e2e.keys.keyId) {
    try {
      return await unwrapSessionKey(e2e.keys, o.known.wrappedKey, o.known.keyId, session);
    } catch (e) {
      // A state file altered on disk: AES-KW's own check says so; the server's meta (asked below) is the truth.
      ctx.note?.(`session ${session}: the data key in its sync state does not unwrap (${(e as Error).message}); asking the server`);
    }
  }
  if (o.announcing && o.create && !o.meta) return savedOrDerivedKey(ctx, e2e, session);
  let meta = o.meta;
  if (!meta) {
    meta = (await serverMeta(ctx, session)) ?? undefined;
    if (meta?.sealed) {
      const m = fetchedMetas.get(ctx) ?? new Map<string, SessionMetaResponse>();
      fetchedMetas.set(ctx, m.set(session, meta));
    }
  }
  if (meta?.sealed) return unwrapSessionKey(e2e.keys, meta.sealed.wrappedKey, meta.sealed.keyId, session);
  if (meta) {
    // Pushed before the account became encrypted and not sealed yet: a key chosen here would not be the one the
    // conversion seals the meta with, so nothing of it moves until the conversion is done.
    throw new SessyncError('conflict', `session ${session} is still in plaintext on the server: the account's conversion to end-to-end encryption is not finished; run \`sessync key init\` to finish it, then sync again`);
  }
  if (!o.create) {
    throw new SessyncError('corrupt', `session ${session}: the server holds no sealed meta for it, so its data key is unknown; its batches cannot be opened`);
  }
  return savedOrDerivedKey(ctx, e2e, session);
}

/**
 * The key of a session whose meta is not sealed on the server yet: the one written down for it, else the one derived
 * for its id. Nothing is written: the derivation gives the same key again after a crash, and on every machine.
 */
export async function savedOrDerivedKey(ctx: SyncContext, e2e: E2eKeys, session: string): Promise<SessionKey> {
  const saved = await readJsonOrNull<WrappedKeyFile>(wrappedKeyPath(ctx, session));
  if (saved && saved.keyId === e2e.keys.keyId && typeof saved.wrappedKey === 'string') return unwrapSessionKey(e2e.keys, saved.wrappedKey, saved.keyId, session);
  return deriveSessionKey(e2e.keys, session);
}

/**
 * The server said the stored meta has another wrapped key (the session was made by an older client, with a random
 * key, or before a rotation): use the stored one from now on.
 */
export async function adoptStoredKey(ctx: SyncContext, e2e: E2eKeys, session: string): Promise<SessionKey> {
  e2e.sessionKeys.delete(session);
  const meta = await serverMeta(ctx, session);
  if (!meta?.sealed) throw new SessyncError('internal', `session ${session}: the server reported another key for it but holds no sealed meta`);
  const k = await sessionKey(ctx, e2e, session, { create: false, meta });
  await writeJsonAtomic(wrappedKeyPath(ctx, session), { keyId: k.keyId, wrappedKey: k.wrappedKey } satisfies WrappedKeyFile);
  return k;
}

/**
 * A session's meta with a sealed one opened: header, name, agent and the plaintext project key, as a plaintext
 * account answers them, so placing and matching sessions work unchanged. A plaintext meta is returned as it is.
 * `served`: the meta as a pull page carried it (withMeta), used instead of asking GET /v1/sessions/:session.
 */
export async function readMeta(ctx: SyncContext, session: string, served?: SessionMetaResponse): Promise<SessionMetaResponse> {
  const fetched = fetchedMetas.get(ctx)?.get(session);
  if (fetched) fetchedMetas.get(ctx)!.delete(session); // used once: a later read asks the server again
  const meta = served ?? fetched ?? (await ctx.api.sessionMeta(session));
  if (!meta.sealed) return meta;
  const e2e = await ctx.e2e?.();
  if (!e2e) throw new SessyncError('corrupt', `session ${session}: its meta is sealed but the account has no key record`);
  const key = await sessionKey(ctx, e2e, session, { create: false, meta });
  const open = await openMeta(key, e2e.account, session, meta.sealed.ciphertext);
  const header = open.agent !== undefined && open.header.agent === undefined ? { ...open.header, agent: open.agent } : open.header;
  return {
    ...meta,
    header,
    ...(open.name !== undefined ? { name: open.name } : {}),
    ...(typeof open.projectKey === 'string' ? { projectKey: open.projectKey } : {}),
  };
}
