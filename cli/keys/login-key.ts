// What `sessync login` does about end-to-end encryption: a new account gets its key here; otherwise it says where the account stands.
import { isSessyncError } from '../../shared/errors.js';
import type { AccountKeyResponse } from '../../shared/wire.js';
import type { ApiClient } from '../api-client.js';
import { createAccountKey } from './key-actions.js';
import { loadKey } from './key-store.js';
import { IMPORT_HOW, verifyKey } from './sync-keys.js';

export interface LoginKey {
  encrypted: boolean;
  keyId?: string;
  /** The export string of a key created by this login: shown once. */
  created?: string;
  /** This machine holds the account's key. */
  hasKey?: boolean;
  note?: string;
}

/**
 * An account with no key record and no sessions is new: its key is made here (unless --no-encrypt), so it is
 * encrypted from its first batch. One with sessions is converted only by `sessync key init`, on purpose.
 */
export async function loginKey(api: ApiClient, env: NodeJS.ProcessEnv, account: string, noEncrypt: boolean): Promise<LoginKey> {
  let remote: AccountKeyResponse;
  try {
    remote = await api.accountKey();
  } catch (e) {
    // A server from before end-to-end encryption: the account stays as it is.
    if (isSessyncError(e, 'not_found') || isSessyncError(e, 'wrong_server')) return { encrypted: false, note: 'this server predates end-to-end encryption: sessions sync in plaintext' };
    throw e;
  }
  if (remote.encrypted) {
    const stored = await loadKey(env, api.url, account).catch(() => null);
    try {
      await verifyKey(remote, stored?.key ?? null);
      return { encrypted: true, keyId: remote.keyId, hasKey: true };
    } catch (e) {
      if (!isSessyncError(e, 'forbidden') && !isSessyncError(e, 'key_mismatch')) throw e;
      return { encrypted: true, keyId: remote.keyId, hasKey: false, note: `this account is end-to-end encrypted: before push and pull work here, ${IMPORT_HOW}` };
    }
  }
  if (noEncrypt) return { encrypted: false, note: 'not end-to-end encrypted (--no-encrypt): the server can read what is synced; `sessync key init` encrypts it later' };
  if ((await api.changes()).heads.length > 0) {
    return { encrypted: false, note: 'this account holds plaintext sessions: `sessync key init` encrypts them and the account (end-to-end)' };
  }
  const made = await createAccountKey({ api, account, env });
  return { encrypted: true, keyId: made.key.keyId, created: made.exported, hasKey: true };
}
