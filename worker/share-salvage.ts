// What the bytes of a damaged share record still say (a cut write keeps the fields before the cut), trusted only as far as the account's other records confirm them.
import type { BlobStore } from './store/blob-store.js';
import { keys } from '../shared/keys.js';
import { SHARE_ID_RE } from '../shared/share-crypto.js';
import { isDamagedRead, readShareIndexKeepingBytes, readShareRecordKeepingBytes, type ShareRecord } from './share-records.js';

// UTF-8, not latin1 (which workerd may not decode): bytes that are not UTF-8 become U+FFFD, ASCII stays as it is.
const decoder = new TextDecoder();
const HASH_RE = /^[0-9a-f]{64}$/;

/**
 * The first value of the string field `name` in damaged JSON bytes, or undefined. Only the first: the server writes
 * each record once, whole, so a record holding a field twice is not a cut write of it, and each further value would
 * cost a read to check (see the budgets of the list and of a session's deletion).
 */
export function fieldIn(bytes: Uint8Array, name: string): string | undefined {
  return new RegExp(`"${name}"\\s*:\\s*"([^"\\\\]*)"`).exec(decoder.decode(bytes))?.[1];
}

/** The token hash the damaged bytes of an index entry or a session pointer still hold, or undefined. */
export function hashIn(bytes: Uint8Array): string | undefined {
  const h = fieldIn(bytes, 'tokenHash');
  return h !== undefined && HASH_RE.test(h) ? h : undefined;
}

/** The dates a damaged share record still holds, for the tombstone that replaces it (else now: the link is dead from now). */
export function datesIn(bytes: Uint8Array | undefined, now: string): { created: string; expiresAt: string } {
  const date = (name: string) => {
    const v = bytes && fieldIn(bytes, name);
    return v !== undefined && !Number.isNaN(Date.parse(v)) ? v : now;
  };
  return { created: date('created'), expiresAt: date('expiresAt') };
}

/**
 * A share found from damaged bytes: its token hash, and its record (null when that is damaged too, `bytes` then its
 * bytes, or when none was ever written, `missing`).
 */
export interface SalvagedShare {
  tokenHash: string;
  record: ShareRecord | null;
  bytes?: Uint8Array;
  /**
   * No share record at the hash: its making stopped after the index entry (which is written first), so its link never
   * opened and answers 404. Only an index entry's bytes are taken so: a pointer is written before the entry, so its
   * share may have been made live under a sound entry, which then leads to it.
   */
  missing?: true;
}

/**
 * The share that the damaged bytes of a record of share `id` in this account's own key space (its index entry or a
 * session's pointer, which both hold the token's hash) still lead to, or null; one read at most (see `missing`). The share record the
 * hash names counts when it is sound and says this account and this id: damaged bytes never lead to another share. A
 * damaged share record counts when what its bytes still say does not name another account or id: the account's own
 * record names it, and its link cannot open anyway, so replacing it by the revoked tombstone only makes the link
 * answer like any revoked one (and lets the damaged entry go). That rests on the account's records holding only
 * hashes the server wrote for it: no request names a hash or an id (see share-both-damaged.test.ts); an entry put in
 * the store by hand could make an account tombstone a damaged record, never a sound one, of another's.
 */
export async function shareOfDamagedRecord(store: BlobStore, account: string, id: string, bytes: Uint8Array): Promise<SalvagedShare | null> {
  const tokenHash = hashIn(bytes);
  if (tokenHash === undefined) return null;
  const record = await readShareRecordKeepingBytes(store, tokenHash);
  // A revocation or purge replaces a record and never removes it: none here means none was ever written.
  if (record === null) return { tokenHash, record: null, missing: true };
  if (isDamagedRead(record)) {
    const says = { account: fieldIn(record.damaged, 'account'), id: fieldIn(record.damaged, 'id') };
    if ((says.account !== undefined && says.account !== account) || (says.id !== undefined && says.id !== id)) return null;
    return { tokenHash, record: null, bytes: record.damaged };
  }
  return record.account === account && record.id === id ? { tokenHash, record } : null;
}

/**
 * Whose the damaged share record of `tokenHash` is, for its owner revoking it by the link: the share's id when its
 * bytes name this account, or name an id whose entry in this account's index holds this hash (one read); `theirs` when
 * they name another account; `unknown` when neither can be told (only the server's admin can then remove it).
 */
export async function ownerOfDamagedShareRecord(store: BlobStore, account: string, tokenHash: string, bytes: Uint8Array): Promise<{ id: string } | 'theirs' | 'unknown'> {
  const says = { account: fieldIn(bytes, 'account'), id: fieldIn(bytes, 'id') };
  if (says.account !== undefined && says.account !== account) return 'theirs';
  if (says.id === undefined || !SHARE_ID_RE.test(says.id)) return 'unknown';
  if (says.account === account) return { id: says.id };
  const index = await readShareIndexKeepingBytes(store, keys.accountShare(account, says.id));
  if (index === null) return 'unknown';
  const named = isDamagedRead(index) ? hashIn(index.damaged) : index.tokenHash;
  return named === tokenHash ? { id: says.id } : 'unknown';
}
