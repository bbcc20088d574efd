// The two records of a share (the token's record, the account's index entry), checked on read: a damaged one is a logged 422 `corrupt`, never a 500.
import { z } from 'zod';
import type { BlobStore } from './store/blob-store.js';
import { parseStoredRecord, readStoredRecord } from './stored-record.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
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
/** What a damaged index entry means for a revocation by id (the list shows such a share as damaged). */
const DAMAGED_INDEX = "the server cannot find the share's link from its id: revoke it by its link or token (`sessync unshare <link>`), which replaces the record, or ask the server's admin (the record's key is in the server's log)";
/** A damaged session pointer is only ever read by the session's deletion, which then finds the share by its id. */
const DAMAGED_POINTER = "deleting the session finds the share from the pointer's id instead";

/** The share record of a token's hash, or null; a damaged one throws `corrupt` saying what a reader of the link can do. */
export function readShareRecord(store: BlobStore, tokenHash: string): Promise<ShareRecord | null> {
  return readStoredRecord(store, keys.share(tokenHash), ShareRecordSchema, 'share record', DAMAGED_SHARE);
}

/** A record read whose bytes are damaged: the bytes (to salvage what they still say) and the `corrupt` the read logged. */
export interface DamagedRead {
  damaged: Uint8Array;
  error: SessyncError;
}

export function isDamagedRead(r: unknown): r is DamagedRead {
  return typeof r === 'object' && r !== null && 'damaged' in r && (r as DamagedRead).damaged instanceof Uint8Array;
}

/** One read of the record at `key`: sound, absent (null), or damaged (logged by the parse) with its bytes. */
async function readKeepingBytes<T>(store: BlobStore, key: string, schema: z.ZodType<T>, what: string, advice: string): Promise<T | null | DamagedRead> {
  const obj = await store.get(key);
  if (!obj) return null;
  try {
    return parseStoredRecord(obj.body, key, schema, what, advice);
  } catch (e) {
    if (!isSessyncError(e, 'corrupt')) throw e;
    return { damaged: obj.body, error: e };
  }
}

/**
 * The share record of a token's hash, read once, keeping the bytes of a damaged one (see readShareRecord); its callers
 * work round the damage (share-salvage.ts) and say what they did, so its `corrupt` is the link reader's.
 */
export function readShareRecordKeepingBytes(store: BlobStore, tokenHash: string): Promise<ShareRecord | null | DamagedRead> {
  return readKeepingBytes(store, keys.share(tokenHash), ShareRecordSchema, 'share record', DAMAGED_SHARE);
}

/** The index entry at `key`, read once, keeping the bytes of a damaged one (see readShareIndex). */
export function readShareIndexKeepingBytes(store: BlobStore, key: string): Promise<ShareIndexRecord | null | DamagedRead> {
  return readKeepingBytes(store, key, ShareIndexRecordSchema, 'share index record', DAMAGED_INDEX);
}

/** The session's pointer at `key`, read once, keeping the bytes of a damaged one (see readSessionSharePointer). */
export function readSessionSharePointerKeepingBytes(store: BlobStore, key: string): Promise<SessionSharePointer | null | DamagedRead> {
  return readKeepingBytes(store, key, SessionSharePointerSchema, 'share pointer of a session', DAMAGED_POINTER);
}
