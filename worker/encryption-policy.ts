// What an account takes given its key record: an encrypted account only ciphertext and sealed meta, a plaintext one no sealed meta.
import { SessyncError } from '../shared/errors.js';
import { isSealedMetaInput, type BatchEnvelope, type PushBatchRequest, type SealedMeta } from '../shared/wire.js';
import { keyMismatch, type StoredAccountKey } from './account-key.js';

export function encryptionRequired(what: string): SessyncError {
  return new SessyncError(
    'encryption_required',
    `this account is end-to-end encrypted, so the server takes no ${what}; update sessync, and run \`sessync key import\` on this machine if it does not have the account key yet`,
    { retryable: false },
  );
}

export function notEncrypted(what: string): SessyncError {
  return new SessyncError('not_encrypted', `this account is not end-to-end encrypted, so ${what}; run \`sessync key init\` to encrypt it`, { retryable: false });
}

/** Throws unless `sealed` is under the account's current key (a session key wrapped under a retired one is not readable to machines that imported only the new key). */
export function requireCurrentKey(accountKey: StoredAccountKey, sealed: Pick<SealedMeta, 'keyId'>, what: string): void {
  if (sealed.keyId === accountKey.keyId) return;
  const retired = accountKey.retired.some((r) => r.keyId === sealed.keyId);
  throw keyMismatch(
    retired
      ? `${what} is under account key ${sealed.keyId}, which was rotated to ${accountKey.keyId}: run \`sessync key import\` with the new key`
      : `${what} is under key ${sealed.keyId}, which is not this account's key (${accountKey.keyId})`,
  );
}

/** Throws unless the account is encrypted; answers its key record. For the seal and re-wrap routes. */
export function requireEncrypted(accountKey: StoredAccountKey | null, what: string): StoredAccountKey {
  if (!accountKey) throw notEncrypted(`${what} has nothing to do`);
  return accountKey;
}

/**
 * Throws for a push the account must not take: on an encrypted account a `jsonl` batch or a plaintext meta (no
 * downgrade, whatever the client), on a plaintext one a sealed meta (its ciphertext batches are taken, as always).
 */
export function checkPushEncryption(accountKey: StoredAccountKey | null, req: Pick<PushBatchRequest, 'envelope' | 'meta'>): void {
  const sealed = req.meta && isSealedMetaInput(req.meta) ? req.meta.sealed : null;
  if (!accountKey) {
    if (sealed) throw notEncrypted('it takes no sealed session meta');
    return;
  }
  if (req.envelope.encoding !== 'aes-256-gcm') throw encryptionRequired('plaintext batches (encoding "jsonl")');
  if (req.meta && !sealed) throw encryptionRequired('plaintext session meta (header, project key)');
  if (sealed) requireCurrentKey(accountKey, sealed, 'the session meta');
}

/**
 * Throws, before anything is written, for a batch of entries whose sealed meta wraps another data key than the stored
 * meta's: the session was made elsewhere under another key (by an older client, with a random one, or before a
 * rotation), so these entries are sealed under a key no other machine reads. The client seals them again under the
 * stored key. An empty batch (an older client's announcement) is stored and answered `metaMismatch`, as it always was.
 */
export function refuseOtherDataKey(session: string, env: Pick<BatchEnvelope, 'host' | 'seq' | 'entryCount'>, sealed: Pick<SealedMeta, 'keyId' | 'wrappedKey'>, stored: { keyId: unknown; wrappedKey: unknown }): void {
  if (env.entryCount === 0 || (stored.keyId === sealed.keyId && stored.wrappedKey === sealed.wrappedKey)) return;
  throw new SessyncError(
    'conflict',
    `session ${session} is stored under another data key than batch ${env.seq} of host ${env.host} was sealed with; nothing of it was stored: seal it again under the key of the stored meta (GET /v1/sessions/${session}) and push it again`,
    { details: { metaMismatch: true } },
  );
}
