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

// Stripped: the list answers the record's ShareInfo fields as they are, so nothing else may ride along.
const ShareIndexRecordSchema: z.ZodType<ShareIndexRecord> = ShareInfoSchema.extend({ tokenHash: HASH });

/** What a damaged share record means to whoever opens the link, and how it is mended. */
const DAMAGED_SHARE = 'the link cannot be opened; its owner can revoke it by its id (`sessync shares` lists it, `sessync unshare <id>` replaces the record) and share the session again';
/** What a damaged share record means to its owner revoking it by the link. */
const DAMAGED_SHARE_OWNER = 'the server cannot tell whose share it is from the link: revoke it by its id instead (`sessync shares` lists it, `sessync unshare <id>` replaces the record)';
/** What a damaged index entry means for a revocation by id (the list leaves such a share out, logged). */
const DAMAGED_INDEX = "the server cannot find the share's link from its id: revoke it by its link or token (`sessync unshare <link>`), which replaces the record, or ask the server's admin (the record's key is in the server's log)";

/** The share record of a token's hash, or null; a damaged one throws `corrupt` saying what a reader of the link can do. */
export function readShareRecord(store: BlobStore, tokenHash: string, forOwner = false): Promise<ShareRecord | null> {
  return readStoredRecord(store, keys.share(tokenHash), ShareRecordSchema, 'share record', forOwner ? DAMAGED_SHARE_OWNER : DAMAGED_SHARE);
}

/** The index entry at `key`, or null; a damaged one throws `corrupt` (logged with the key). */
export function readShareIndex(store: BlobStore, key: string): Promise<ShareIndexRecord | null> {
  return readStoredRecord(store, key, ShareIndexRecordSchema, 'share index record', DAMAGED_INDEX);
}

/**
 * The share record about to be replaced by a revocation's tombstone: a damaged one (logged by the read) counts as
 * absent, since the tombstone is written whole from what the caller knows, which is what mends it.
 */
export async function readShareRecordToReplace(store: BlobStore, tokenHash: string): Promise<ShareRecord | null> {
  return readShareRecord(store, tokenHash).catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e)));
}
