// The account key on this machine: create (new account), import (checked against the server first), export, status.
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { deriveKeys, exportAccountKey, importAccountKey, keyCheck, newAccountKey, type AccountKey } from '../../shared/sync-crypto.js';
import type { AccountKeyResponse } from '../../shared/wire.js';
import { ApiClient } from '../api-client.js';
import { requireLogin } from '../login-store.js';
import { loadKey, saveKey } from './key-store.js';
import { IMPORT_HOW, accountOf, verifyKey } from './sync-keys.js';

export const LOSS_WARNING = 'keep this key safe (a password manager): the server cannot read your sessions, so losing every copy of the key loses them';

/** The logged-in account: its client, its id and the server's key record. */
export interface KeyScope {
  api: ApiClient;
  account: string;
  env: NodeJS.ProcessEnv;
}

export async function keyScope(env: NodeJS.ProcessEnv): Promise<KeyScope> {
  const api = ApiClient.forLogin(await requireLogin(env));
  return { api, account: await accountOf(api), env };
}

/**
 * A new key for the account: saved here first (0600), then its check sent to the server. A crash in between leaves
 * a key here the server does not know, replaced by the next attempt; never a server record without a key anywhere.
 */
export async function createAccountKey(s: KeyScope, o: { replaces?: string; previous?: AccountKey[] } = {}): Promise<{ key: AccountKey; exported: string; remote: AccountKeyResponse; path: string }> {
  const key = newAccountKey();
  const exported = await exportAccountKey(key);
  const previous = await Promise.all((o.previous ?? []).map((k) => exportAccountKey(k)));
  const path = await saveKey(s.env, s.api.url, s.account, exported, previous);
  const check = await keyCheck(await deriveKeys(key));
  const remote = await s.api.putAccountKey({ keyId: key.keyId, check, ...(o.replaces ? { replaces: o.replaces } : {}) });
  return { key, exported, remote, path };
}

/** Parses and checks an export string against the server's key check; only a key that passes is written here. */
export async function importKey(s: KeyScope, text: string): Promise<{ key: AccountKey; path: string }> {
  const key = await importAccountKey(text); // typos and truncation: refused before any request
  const remote = await s.api.accountKey();
  if (!remote.encrypted) {
    throw new SessyncError('not_encrypted', 'this account is not end-to-end encrypted, so it has no key to import; `sessync key init` encrypts it (with a new key)');
  }
  if (key.keyId !== remote.keyId || (await keyCheck(await deriveKeys(key))) !== remote.check) {
    const retired = remote.retired.find((r) => r.keyId === key.keyId);
    const why = retired
      ? `this key (${key.keyId}) was retired by a rotation on ${retired.retiredAt}; the account's key is now ${remote.keyId}`
      : key.keyId === remote.keyId
        ? `this key fails the server's key check: it is not the account's key ${remote.keyId}`
        : `this key (${key.keyId}) is not the account's key ${remote.keyId}`;
    throw new SessyncError('key_mismatch', `${why}: nothing was written. Export the current key with \`sessync key export\` on a machine that syncs, and import that`);
  }
  const old = await loadKey(s.env, s.api.url, s.account).catch(() => null);
  const previous = old && old.key.keyId !== key.keyId ? [await exportAccountKey(old.key)] : [];
  return { key, path: await saveKey(s.env, s.api.url, s.account, await exportAccountKey(key), previous) };
}

/** The export string of the key this machine holds. */
export async function exportKey(s: KeyScope): Promise<string> {
  const stored = await loadKey(s.env, s.api.url, s.account);
  if (!stored) throw new SessyncError('not_found', `this machine has no key for account ${s.account}: ${IMPORT_HOW}`);
  return exportAccountKey(stored.key);
}

export interface KeyStatus {
  account: string;
  encrypted: boolean;
  /** The account's key id (encrypted accounts). */
  keyId?: string;
  /** The key id this machine holds, if any. */
  localKeyId?: string;
  /** This machine's key passes the server's key check. */
  matches: boolean;
  /** What to do, when something is. */
  advice?: string;
  plaintextLeft?: number;
}

export async function keyStatus(s: KeyScope): Promise<KeyStatus> {
  const remote = await s.api.accountKey();
  const stored = await loadKey(s.env, s.api.url, s.account);
  const base = { account: s.account, ...(stored ? { localKeyId: stored.key.keyId } : {}) };
  if (!remote.encrypted) {
    return { ...base, encrypted: false, matches: false, advice: 'this account is not end-to-end encrypted: `sessync key init` encrypts it' };
  }
  const out: KeyStatus = { ...base, encrypted: true, keyId: remote.keyId, matches: false, ...(remote.plaintextLeft !== undefined ? { plaintextLeft: remote.plaintextLeft } : {}) };
  try {
    await verifyKey(remote, stored?.key ?? null);
    out.matches = true;
    if (remote.plaintextLeft) out.advice = `${remote.plaintextLeft} stored object(s) are still plaintext: run \`sessync key init\` to finish the conversion`;
  } catch (e) {
    if (!isSessyncError(e, 'forbidden') && !isSessyncError(e, 'key_mismatch')) throw e;
    out.advice = e.message.replace(/ Nothing was synced\.$/, '');
  }
  return out;
}
