// The account's end-to-end encryption key record: absent on a plaintext account; once written, the account stays encrypted.
import { z } from 'zod';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { NAME_RE, type AccountKeyResponse, type PutAccountKeyRequest } from '../shared/wire.js';
import { encodeJson } from './session-data.js';
import { readStoredRecord } from './stored-record.js';

/** What keys.accountKey holds. The server never sees the key itself: only the id the client gave it and its check. */
const StoredAccountKeySchema = z.object({
  keyId: z.string().regex(NAME_RE),
  check: z.string().min(1),
  created: z.string(),
  retired: z.array(z.object({ keyId: z.string().regex(NAME_RE), retiredAt: z.string() })),
});
export type StoredAccountKey = z.infer<typeof StoredAccountKeySchema>;

const RotationSchema = z.object({ keyId: z.string(), check: z.string() });

export function keyMismatch(message: string): SessyncError {
  return new SessyncError('key_mismatch', `${message}; run \`sessync key status\` to compare this machine's key with the server's`, { retryable: false });
}

/**
 * What a damaged key record means: the server cannot tell whether the account is encrypted, so it refuses to guess
 * (a guess of "plaintext" would take plaintext) and the account's pushes, key reads and rotations answer 422.
 */
const DAMAGED_KEY = "the server cannot tell whether the account is end-to-end encrypted and refuses to guess; ask the server's admin to restore it from a backup";
/** A damaged rotation marker: the server cannot tell which key won the rotation away from the current one. */
const DAMAGED_ROTATION = "the server cannot tell which key the account key was rotated to and refuses to guess; ask the server's admin to restore it from a backup";

/** The account's key record, or null for a plaintext account. */
export function readAccountKey(store: BlobStore, account: string): Promise<StoredAccountKey | null> {
  return readStoredRecord(store, keys.accountKey(account), StoredAccountKeySchema, 'key record of this account', DAMAGED_KEY);
}

export function accountKeyResponse(rec: StoredAccountKey | null): AccountKeyResponse {
  if (!rec) return { encrypted: false };
  return { encrypted: true, keyId: rec.keyId, check: rec.check, created: rec.created, retired: rec.retired };
}

/**
 * PUT /v1/account/key. Creates the record (the account becomes encrypted, for good) or rotates it (`replaces` = the
 * current keyId). The same request sent again after it succeeded answers the record unchanged, so a client can retry
 * a lost answer. Anything else is 409 key_mismatch.
 */
export async function putAccountKey(store: BlobStore, account: string, req: PutAccountKeyRequest): Promise<StoredAccountKey> {
  const key = keys.accountKey(account);
  const now = new Date().toISOString();
  let current = await readAccountKey(store, account);
  if (!current) {
    if (req.replaces !== undefined) throw keyMismatch(`this account has no key yet, so there is no key ${req.replaces} to replace`);
    const created: StoredAccountKey = { keyId: req.keyId, check: req.check, created: now, retired: [] };
    // putIfAbsent: of two machines creating the account's key at once, exactly one wins; the other is told below.
    if (await store.putIfAbsent(key, encodeJson(created))) return created;
    current = await readAccountKey(store, account);
    if (!current) throw new SessyncError('unavailable', 'the account key record was reported present but cannot be read; retry', { retryable: true });
  }
  if (current.keyId === req.keyId) {
    if (current.check === req.check) return current;
    throw keyMismatch(`the server's account key ${current.keyId} has another check than this key of the same id`);
  }
  if (req.replaces === undefined) throw keyMismatch(`this account is already encrypted under key ${current.keyId}; a new key must name it in \`replaces\``);
  if (req.replaces !== current.keyId) throw keyMismatch(`key ${req.replaces} is not the account's current key (${current.keyId})`);
  if (current.retired.some((r) => r.keyId === req.keyId)) throw keyMismatch(`key id ${req.keyId} was already used by a retired key; a new key needs a new id`);
  // One rotation away from each key: the marker's putIfAbsent picks the winner of two machines rotating at once, and
  // a retry of the winner (answer lost, or a crash before the record below was written) finds its own marker.
  const marker = keys.keyRotation(account, current.keyId);
  if (!(await store.putIfAbsent(marker, encodeJson({ keyId: req.keyId, check: req.check })))) {
    const won = await readStoredRecord(store, marker, RotationSchema, 'key rotation record of this account', DAMAGED_ROTATION);
    if (!won || won.keyId !== req.keyId || won.check !== req.check) {
      throw keyMismatch(`another machine already rotated the account key away from ${current.keyId}${won ? ` (to ${won.keyId})` : ''}`);
    }
  }
  const next: StoredAccountKey = { keyId: req.keyId, check: req.check, created: now, retired: [...current.retired, { keyId: current.keyId, retiredAt: now }] };
  await store.put(key, encodeJson(next));
  return next;
}
