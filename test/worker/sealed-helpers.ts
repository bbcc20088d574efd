// Test helpers for end-to-end encrypted accounts over raw HTTP: random bytes stand in for ciphertext (no client crypto); no node:*.
import type { PushBatchRequest, SealBatchRequest, SealedSessionMetaInput, StoredBatch } from '../../shared/wire.js';
import { sha256Hex } from '../../worker/sha256.js';
import { makeBatch, type TestClient } from './routes-helpers.js';

/** Base64 of `n` random bytes: what the server sees of a ciphertext. */
export function randomBase64(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** 64 hex digits, as the client's keyed hash of a project key looks. */
export function randomHex64(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A key check as the client sends it (base64url of 32 bytes, no padding). */
export function checkFor(seed: string): string {
  return btoa(seed.padEnd(32, '.').slice(0, 32)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function sealedMeta(keyId = 'k1', o: { wrappedKey?: string; projectKey?: string } = {}): SealedSessionMetaInput {
  return { projectKey: o.projectKey ?? 'a'.repeat(64), sealed: { keyId, wrappedKey: o.wrappedKey ?? randomBase64(40), ciphertext: randomBase64(300) } };
}

/** A valid push of an aes-256-gcm batch (random bytes as its ciphertext). */
export async function makeSealedBatch(opts: Parameters<typeof makeBatch>[0] & { bytes?: number }): Promise<PushBatchRequest> {
  const req = await makeBatch(opts);
  req.body = randomBase64(opts.bytes ?? 28 + 200);
  req.envelope = { ...req.envelope, encoding: 'aes-256-gcm', sha256: await sha256Hex(req.body) };
  return req;
}

/** The seal of a stored jsonl batch: its envelope with the ciphertext's encoding and hash. */
export async function sealOf(stored: StoredBatch, body = randomBase64(Math.max(28, stored.body.length))): Promise<SealBatchRequest> {
  return { envelope: { ...stored.envelope, encoding: 'aes-256-gcm', sha256: await sha256Hex(body) }, body };
}

export function sealPath(session: string, host: string, seq: number | string): string {
  return `/v1/sessions/${session}/batches/${host}/${seq}/seal`;
}

export function putAccountKey(client: TestClient, keyId: string, replaces?: string, check = checkFor(keyId)) {
  return client.call('PUT', '/v1/account/key', replaces === undefined ? { keyId, check } : { keyId, check, replaces });
}
