// The two records of a share (the token's record, the account's index entry), checked on read: a damaged one is a logged 422 `corrupt`, never a 500.
import { z } from 'zod';
import type { BlobStore } from './store/blob-store.js';
import { readStoredRecord } from './stored-record.js';
import { isSessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { ShareInfoSchema } from '../shared/wire.js';

/** What keys.share(sha256(token)) holds. After revocation the ciphertext is gone and `revoked` says when. */
export interface ShareRecord {
  id: string;
  account: string;
  created: string;
  expiresAt: string;
  ciphertext?: string;
  revoked?: string;
  /** Why it was revoked when not by its owner: `session_deleted` (the session was deleted everywhere), `expired` (purged). */
  reason?: 'session_deleted' | 'expired';
}

/** What keys.sessionShare(account, session, id) holds: deleting the session finds (and revokes) its shares by it. */
export interface SessionSharePointer {
  id: string;
  tokenHash: string;
}

/** What keys.accountShare(account, id) holds: the account's index, for listing and revoking by id. */
export interface ShareIndexRecord extends z.infer<typeof ShareInfoSchema> {
  tokenHash: string;
}

const HASH = z.string().regex(/^[0-9a-f]{64}$/);

// Passthrough: a field a newer server added is kept, not taken for damage (the record is only ever replaced whole).
const ShareRecordSchema: z.ZodType<ShareRecord> = z
  .object({
    id: z.string(),
    account: z.string(),
    created: z.string(),
    expiresAt: z.string(),
    ciphertext: z.string().optional(),
    revoked: z.string().optional(),
    reason: z.enum(['session_deleted', 'expired']).optional(),
  })
  .passthrough();

const SessionSharePointerSchema: z.ZodType<SessionSharePointer> = z.object({ id: z.string(), tokenHash: HASH });

// Stripped: the list answers the record's ShareInfo fields as they are, so nothing else may ride along.
const ShareIndexRecordSchema: z.ZodType<ShareIndexRecord> = ShareInfoSchema.extend({ tokenHash: HASH });

/** What a damaged share record means to whoever opens the link, and how it is mended. */
const DAMAGED_SHARE = 'the link cannot be opened; its owner can revoke it by its id (`sessync shares` lists it, `sessync unshare <id>` replaces the record) and share the session again';
/** What a damaged share record means to its owner revoking it by the link. */
const DAMAGED_SHARE_OWNER = 'the server cannot tell whose share it is from the link: revoke it by its id instead (`sessync shares` lists it, `sessync unshare <id>` replaces the record)';
/** What a damaged index entry means for a revocation by id (the list shows such a share as damaged). */
const DAMAGED_INDEX = "the server cannot find the share's link from its id: revoke it by its link or token (`sessync unshare <link>`), which replaces the record, or ask the server's admin (the record's key is in the server's log)";
/** A damaged session pointer is only ever read by the session's deletion, which then finds the share by its id. */
const DAMAGED_POINTER = "deleting the session finds the share from the pointer's id instead";
/** A token hash as JSON writes it, found in the bytes of a damaged record (a cut write keeps the fields before the cut). */
const HASH_FIELD = /"tokenHash"\s*:\s*"([0-9a-f]{64})"/g;
// UTF-8, not latin1 (which workerd may not decode): bytes that are not UTF-8 become U+FFFD, ASCII stays as it is.
const decoder = new TextDecoder();

/** The share record of a token's hash, or null; a damaged one throws `corrupt` saying what a reader of the link can do. */
export function readShareRecord(store: BlobStore, tokenHash: string, forOwner = false): Promise<ShareRecord | null> {
  return readStoredRecord(store, keys.share(tokenHash), ShareRecordSchema, 'share record', forOwner ? DAMAGED_SHARE_OWNER : DAMAGED_SHARE);
}

/** The index entry at `key`, or null; a damaged one throws `corrupt` (logged with the key). */
export function readShareIndex(store: BlobStore, key: string): Promise<ShareIndexRecord | null> {
  return readStoredRecord(store, key, ShareIndexRecordSchema, 'share index record', DAMAGED_INDEX);
}

/** The session's pointer to a share at `key`, or null; a damaged one throws `corrupt` (logged with the key). */
export function readSessionSharePointer(store: BlobStore, key: string): Promise<SessionSharePointer | null> {
  return readStoredRecord(store, key, SessionSharePointerSchema, 'share pointer of a session', DAMAGED_POINTER);
}

/** A read whose `corrupt` (logged by it) becomes `damaged`: for callers that work round the damage. */
export function orDamaged<T>(read: Promise<T | null>): Promise<T | null | 'damaged'> {
  return read.catch((e: unknown) => (isSessyncError(e, 'corrupt') ? ('damaged' as const) : Promise.reject(e)));
}

/**
 * The share record that the damaged bytes of a record of share `id` (its index entry or its session pointer, which
 * both hold the token's hash) still lead to, or null. A hash found in them counts only when the share record it
 * names is sound and says this account and this id: damaged bytes can never lead to another share, anyone's.
 */
export async function shareOfDamagedRecord(store: BlobStore, account: string, id: string, bytes: Uint8Array | undefined): Promise<{ tokenHash: string; record: ShareRecord } | null> {
  if (!bytes) return null;
  const hashes = new Set([...decoder.decode(bytes).matchAll(HASH_FIELD)].map((m) => m[1]!));
  for (const tokenHash of [...hashes].slice(0, 4)) {
    const record = await orDamaged(readShareRecord(store, tokenHash));
    if (record !== null && record !== 'damaged' && record.account === account && record.id === id) return { tokenHash, record };
  }
  return null;
}

/** What the server still knows of share `id` whose index entry is damaged (see shareOfDamagedRecord), or null. */
export async function shareOfDamagedIndex(store: BlobStore, account: string, id: string): Promise<{ tokenHash: string; record: ShareRecord } | null> {
  return shareOfDamagedRecord(store, account, id, (await store.get(keys.accountShare(account, id)))?.body);
}

/**
 * The share record about to be replaced by a revocation's tombstone: a damaged one (logged by the read) counts as
 * absent, since the tombstone is written whole from what the caller knows, which is what mends it.
 */
export async function readShareRecordToReplace(store: BlobStore, tokenHash: string): Promise<ShareRecord | null> {
  return readShareRecord(store, tokenHash).catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e)));
}
