// What a push sends on an encrypted account: the meta sealed (project key as its HMAC) and each batch body sealed to its envelope.
import { createHash } from 'node:crypto';
import { resealBatchBytes, sealBatchBytes, sealMeta, sealProjectKey, type BatchBinding, type SessionKey } from '../../shared/sync-crypto.js';
import type { SealedSessionMetaInput, SessionMetaInput } from '../../shared/wire.js';
import type { E2eKeys } from './sync-keys.js';

/** The plaintext meta sealed under the session key; the server sees only the project key's HMAC and the wrapped key. */
export async function sealedMeta(e2e: E2eKeys, key: SessionKey, session: string, plain: SessionMetaInput): Promise<SealedSessionMetaInput> {
  const agent = typeof plain.header.agent === 'string' ? plain.header.agent : undefined;
  const ciphertext = await sealMeta(key, e2e.account, session, {
    header: plain.header,
    projectKey: plain.projectKey,
    ...(plain.name !== undefined ? { name: plain.name } : {}),
    ...(agent !== undefined ? { agent } : {}),
  });
  return { projectKey: await sealProjectKey(e2e.keys, plain.projectKey), sealed: { keyId: key.keyId, wrappedKey: key.wrappedKey, ciphertext } };
}

/**
 * A batch body sealed for its envelope as raw bytes (nonce, ciphertext, tag), and their sha-256: what a push frame
 * carries, and what the pending batch keeps, so nothing is base64'd on the way.
 */
export async function sealedBytes(e2e: E2eKeys, key: SessionKey, b: Omit<BatchBinding, 'account'>, body: string | Uint8Array): Promise<{ body: Uint8Array; sha256: string }> {
  const bytes = await sealBatchBytes(key, { ...b, account: e2e.account }, body);
  return { body: bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** What a sealed pending batch keeps instead of its body: the nonce it drew and the sha-256 of the plaintext sealed. */
export interface ResealFrom {
  nonce: string;
  plainSha256: string;
}

/** The nonce of sealed bytes, and the sha-256 of the plaintext they seal: what `resealedBytes` needs to re-make them. */
export function resealFrom(sealed: Uint8Array, plainSha256: string): ResealFrom {
  return { nonce: Buffer.from(sealed.subarray(0, 12)).toString('base64'), plainSha256 };
}

/**
 * The sealed bytes of a pending batch re-made from its plaintext (read from the session file again), or null when
 * that plaintext is not the one sealed (the file changed) or the result is not the bytes written down (`sha256`: under
 * another key by now). Only then is the nonce used again, on the very same message.
 */
export async function resealedBytes(e2e: E2eKeys, key: SessionKey, b: Omit<BatchBinding, 'account'>, plain: Uint8Array, from: ResealFrom, sha256: string): Promise<Uint8Array | null> {
  if (createHash('sha256').update(plain).digest('hex') !== from.plainSha256) return null;
  const bytes = await resealBatchBytes(key, { ...b, account: e2e.account }, plain, Buffer.from(from.nonce, 'base64'));
  return createHash('sha256').update(bytes).digest('hex') === sha256 ? bytes : null;
}

/** A batch body sealed as base64 text, and the sha-256 of that text: the JSON seal request of a conversion. */
export async function sealedBody(e2e: E2eKeys, key: SessionKey, b: Omit<BatchBinding, 'account'>, body: string): Promise<{ body: string; sha256: string }> {
  // Buffer's base64 is native: the pure-JS one of shared/ would cost more than the encryption itself.
  const bytes = await sealBatchBytes(key, { ...b, account: e2e.account }, body);
  const sealed = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return { body: sealed, sha256: createHash('sha256').update(sealed, 'utf8').digest('hex') };
}
