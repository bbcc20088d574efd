// Deleting a session everywhere: tombstone first, then its shares, heads, batches and meta, in bounded steps a retry resumes.
import type { BlobStore } from './store/blob-store.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { NAME_RE, type DeleteSessionResponse, type Tombstone, type UnrevokedShare } from '../shared/wire.js';
import { batchBytes, encodeJson, keyExists, listAll, notFoundSession, readBatch, sessionHeads } from './session-data.js';
import { addBytes, readQuota } from './quota.js';
import { CountedStore } from './store/counted-store.js';
import { isDamagedRead, readSessionSharePointerKeepingBytes, readShareIndexKeepingBytes, readShareRecordKeepingBytes } from './share-records.js';
import { datesIn, shareOfDamagedRecord, type SalvagedShare } from './share-salvage.js';

/**
 * Store operations one step may make: a Workers request may make WORKERS_SUBREQUESTS (50) subrequests, so a session of many
 * batches is deleted over several calls (each answers `complete: false` until the last). Counted as made; a step may
 * pass it by one share's worth (SHARE_OPS: one share is revoked whatever is left) and the answer's three calls.
 */
export const DELETE_STEP_OPS = 32;
/** Deletes sent at once. */
const PARALLEL = 8;

/**
 * The tombstone lives in its key, `deleted/<session>/<ms>/<host>`, so the changes feed lists every deleted
 * session with its time and host without reading an object per session.
 */
function tombstoneKey(account: string, t: { session: string; ms: number; host: string }): string {
  return `${keys.tombstone(account, t.session)}/${String(t.ms).padStart(13, '0')}/${t.host}`;
}

function parseTombstoneKey(account: string, key: string): Tombstone | null {
  const rest = key.slice(keys.tombstonesPrefix(account).length).split('/');
  if (rest.length !== 3) return null;
  const [session, ms, host] = rest as [string, string, string];
  if (!NAME_RE.test(session) || !NAME_RE.test(host) || !/^\d{13}$/.test(ms)) return null;
  return { session, deletedAt: new Date(Number(ms)).toISOString(), host };
}

/** Every tombstone of the account (one list call per thousand deleted sessions), the first per session. */
export async function listTombstones(store: BlobStore, account: string): Promise<Map<string, Tombstone>> {
  const out = new Map<string, Tombstone>();
  for (const k of await listAll(store, keys.tombstonesPrefix(account))) {
    const t = parseTombstoneKey(account, k);
    if (t && !out.has(t.session)) out.set(t.session, t);
  }
  return out;
}

export async function findTombstone(store: BlobStore, account: string, session: string): Promise<Tombstone | null> {
  const page = await store.list({ prefix: `${keys.tombstone(account, session)}/`, limit: 1 });
  return page.keys[0] === undefined ? null : parseTombstoneKey(account, page.keys[0]);
}

/** The 410 a deleted session answers with; details let a client record the tombstone. */
export function goneSession(t: Tombstone): SessyncError {
  return new SessyncError(
    'gone',
    `session ${t.session} was deleted from the server at ${t.deletedAt} (asked by host ${t.host}); it is not pushed again unless you run \`sessync push ${t.session} --undelete\``,
    { details: { tombstone: t } },
  );
}

/** What is still stored of the session, up to `limit` keys: shares pointers first, then heads, batches, meta. */
async function remaining(store: BlobStore, account: string, session: string, limit: number): Promise<{ shares: string[]; objects: string[] }> {
  const sharesPage = await store.list({ prefix: `${keys.sessionPrefix(account, session)}shares/`, limit });
  if (sharesPage.keys.length) return { shares: sharesPage.keys, objects: [] };
  // Heads before batches: a head names batches below it, so no step leaves a head whose batches are gone.
  const heads = await store.list({ prefix: keys.sessionHeadsPrefix(account, session), limit });
  if (heads.keys.length) return { shares: [], objects: heads.keys };
  const batches = await store.list({ prefix: `${keys.sessionPrefix(account, session)}b/`, limit });
  if (batches.keys.length) return { shares: [], objects: batches.keys };
  const meta = keys.sessionMeta(account, session);
  const metaPage = await store.list({ prefix: meta, limit: 1 });
  return { shares: [], objects: metaPage.keys[0] === meta ? [meta] : [] };
}

/** A share a session pointer leads to: its token hash, and what the tombstone that replaces its record keeps of it. */
interface PointedShare {
  tokenHash: string;
  dates: { created: string; expiresAt: string };
}

/**
 * The share a session pointer names, or null when there is no live share to revoke. A damaged pointer (logged by its
 * read) is worked round: a hash its bytes still hold, if the share record confirms it (see shareOfDamagedRecord); then
 * the share's id, in the pointer's key, and its index entry, which holds the hash too (or, damaged, may still hold it).
 * `unknown` when nothing leads to the share record: its link may still open, and only its owner (who has the link) can
 * revoke it. At most SHARE_OPS store operations, with the revocation's: one read of each record, no record read twice.
 */
async function pointedShare(store: BlobStore, account: string, id: string, pointerKey: string): Promise<PointedShare | null | 'unknown'> {
  const now = new Date().toISOString();
  const replacing = async (tokenHash: string): Promise<PointedShare> => {
    const old = await readShareRecordKeepingBytes(store, tokenHash);
    // A damaged share record (logged by the read) is replaced by the tombstone like any other: refusing here, after
    // the session's tombstone, would leave the session hidden with its other shares and batches still stored.
    return { tokenHash, dates: old === null || isDamagedRead(old) ? datesIn(old?.damaged, now) : { created: old.created, expiresAt: old.expiresAt } };
  };
  const salvaged = (s: SalvagedShare): PointedShare => ({ tokenHash: s.tokenHash, dates: s.record ? { created: s.record.created, expiresAt: s.record.expiresAt } : datesIn(s.bytes, now) });
  const p = await readSessionSharePointerKeepingBytes(store, pointerKey);
  if (p === null) return null;
  if (!isDamagedRead(p) && p.id === id) return replacing(p.tokenHash);
  const fromPointer = isDamagedRead(p) ? await shareOfDamagedRecord(store, account, id, p.damaged) : null;
  // No record at the pointer's hash: its index entry, not the pointer, says whether the share ever went live.
  if (fromPointer && !fromPointer.missing) return salvaged(fromPointer);
  const index = await readShareIndexKeepingBytes(store, keys.accountShare(account, id));
  // No index entry: revoked already (a revocation removes it before the pointer) or never made live (made after it).
  if (index === null) return null;
  if (!isDamagedRead(index)) return replacing(index.tokenHash);
  const fromIndex = await shareOfDamagedRecord(store, account, id, index.damaged);
  return fromIndex ? salvaged(fromIndex) : 'unknown';
}

/**
 * Store operations one share of the deleted session may cost at most (see pointedShare): the pointer, a record its
 * damaged bytes name, the index entry, a record its damaged bytes name, then the tombstone, the index entry's removal
 * and the pointer's (or, unrevoked, the note and the pointer's removal). A sound pointer costs 5.
 */
export const SHARE_OPS = 7;

/**
 * Revokes one share of the deleted session: its ciphertext goes, the link answers 410, it leaves the share list.
 * Returns the share's id when it could not be revoked (see pointedShare): the deletion goes on, and says so on every
 * answer from now on (the note is written before the pointer goes, so a lost answer or a crash loses no warning).
 */
async function revokeSessionShare(store: BlobStore, account: string, session: string, pointerKey: string): Promise<string | null> {
  const id = pointerKey.slice(`${keys.sessionPrefix(account, session)}shares/`.length);
  const share = await pointedShare(store, account, id, pointerKey);
  if (share === 'unknown') {
    console.error(`sessync: the share pointer at ${pointerKey} and the share index record at ${keys.accountShare(account, id)} are damaged: share ${id} of the deleted session ${session} could not be revoked (its link may still open)`);
    await store.put(keys.unrevokedShare(account, session, id), encodeJson({ id, session }));
  } else if (share !== null) {
    const now = new Date().toISOString();
    await store.put(keys.share(share.tokenHash), encodeJson({ id, account, ...share.dates, revoked: now, reason: 'session_deleted' }));
    await store.delete(keys.accountShare(account, id));
  }
  await store.delete(pointerKey);
  return share === 'unknown' ? id : null;
}

/** What the owner of a share the deletion could not revoke can do. */
function notRevoked(session: string, id: string): UnrevokedShare {
  return {
    id,
    message: `share ${id} of session ${session} could not be revoked: its records on the server are damaged, so the server cannot find its link, which may still open. Revoke it by the link (\`sessync unshare <link>\`); \`sessync shares\` lists it as damaged until then`,
  };
}

/** Every share the deletion of `session` could not revoke that is not revoked since (one list call). */
async function unrevokedShares(store: BlobStore, account: string, session: string): Promise<UnrevokedShare[]> {
  const prefix = keys.sessionUnrevokedPrefix(account, session);
  return (await store.list({ prefix })).keys.map((k) => notRevoked(session, k.slice(prefix.length)));
}

/** `fn` over `items`, PARALLEL at a time; a chunk with a failure ends once all its calls have (so what they did is known), with the first error. */
async function inChunks(items: readonly string[], fn: (k: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL) {
    const failed = (await Promise.allSettled(items.slice(i, i + PARALLEL).map(fn))).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/**
 * One step of deleting `session`. The tombstone is written before anything is removed: from then on the changes
 * feed hides the session and pushes to it are refused, so an interruption at any later point leaves a session
 * nobody is offered, and the next call (the client retries) carries on from what is left. Before the tombstone
 * nothing is touched, so an interruption there leaves the session whole and listed.
 */
export async function deleteSessionStep(inner: BlobStore, account: string, session: string, host: string, budget = DELETE_STEP_OPS): Promise<DeleteSessionResponse> {
  // Every call counted as it is made: what is left of the budget is what is really left.
  const store = new CountedStore(inner);
  let tomb = await findTombstone(store, account, session);
  if (!tomb) {
    // Only whether the meta exists: a session whose meta an older server stored damaged must still be deletable.
    const [meta, heads] = await Promise.all([keyExists(store, keys.sessionMeta(account, session)), sessionHeads(store, account, session)]);
    if (!meta && heads.size === 0) throw notFoundSession(session);
    const ms = Date.now();
    await store.putIfAbsent(tombstoneKey(account, { session, ms, host }), encodeJson({ session, host }));
    // Two deletions at once each write one; the first in key order is the one everybody reports.
    tomb = (await findTombstone(store, account, session)) ?? { session, deletedAt: new Date(ms).toISOString(), host };
  }
  let removed = 0;
  let sharesRevoked = 0;
  // With a quota, each batch is read before it goes, so the bytes counter drops by what the deletion frees. A damaged
  // quota record counts as a quota (it is logged by the read): refusing here, after the tombstone, would leave the
  // session hidden with its batches and share links live; counting freed bytes costs only reads, and setting the
  // quota again (which mends the record) recounts the usage anyway.
  const quotaOn = await readQuota(store, account).then(
    (q) => q !== null,
    (e: unknown) => (isSessyncError(e, 'corrupt') ? true : Promise.reject(e)),
  );
  const perObject = quotaOn ? 2 : 1;
  let freed = 0;
  const batchPrefix = `${keys.sessionPrefix(account, session)}b/`;
  // Found by this call, as a server before the notes answered: a client that adds up every answer names each once.
  const sharesNotRevoked: UnrevokedShare[] = [];
  // Past the budget, the answer costs one list more (the unrevoked shares) and, after freed bytes, the usage's read and write.
  const finish = async (complete: boolean): Promise<DeleteSessionResponse> => {
    // Zeroed before the write, not after: a write that lands but reports failure (a lost reply) must not be taken off
    // again by the catch below. A write that truly failed leaves the counter high, which refuses early rather than
    // letting an account past its quota; setting the quota again recounts it.
    const toFree = freed;
    freed = 0;
    if (toFree > 0) await addBytes(store, account, -toFree);
    // From the notes, not from this call: a retry, or a call after the answer that said it was lost, says it again.
    const sharesStillUnrevoked = await unrevokedShares(store, account, session);
    return {
      session,
      deletedAt: tomb.deletedAt,
      host: tomb.host,
      complete,
      removed,
      sharesRevoked,
      ...(sharesNotRevoked.length ? { sharesNotRevoked } : {}),
      ...(sharesStillUnrevoked.length ? { sharesStillUnrevoked } : {}),
    };
  };
  try {
    for (;;) {
      const left = await remaining(store, account, session, Math.max(1, Math.min(100, budget - store.ops)));
      if (left.shares.length === 0 && left.objects.length === 0) return await finish(true);
      if (store.ops >= budget) break;
      // Shares by the most one may cost, so a step of damaged ones stays inside the budget too.
      const shares = left.shares.slice(0, Math.max(1, Math.floor((budget - store.ops) / SHARE_OPS)));
      await inChunks(shares, async (k) => {
        const unrevoked = await revokeSessionShare(store, account, session, k);
        if (unrevoked === null) {
          sharesRevoked++;
        } else {
          sharesNotRevoked.push(notRevoked(session, unrevoked));
          // Its pointer went: progress, also for an older client, which stops on a step that removed and revoked nothing.
          removed++;
        }
      });
      const objects = left.objects.slice(0, Math.max(0, Math.floor((budget - store.ops) / perObject)));
      await inChunks(objects, async (k) => {
        if (quotaOn && k.startsWith(batchPrefix)) {
          const size = batchBytes(await readBatch(store, k));
          await store.delete(k);
          freed += size; // once deleted, and after the awaits: `freed += await ...` would read freed before it and lose parallel adds
          return;
        }
        await store.delete(k);
      });
      removed += objects.length;
      if (store.ops >= budget) break;
    }
    return await finish(false);
  } catch (e) {
    // Batches this step deleted before the failure are gone for good: a retry cannot find their bytes again, so
    // they are taken off now, or the counter would keep them for ever.
    if (freed > 0) {
      await addBytes(store, account, -freed).catch((counting: unknown) => {
        console.error(`sessync: the usage counter of account ${account} keeps ${freed} bytes the deletion of session ${session} freed (setting the quota again recounts it): ${(counting as Error)?.message ?? String(counting)}`);
      });
    }
    throw e;
  }
}

/** Drops the tombstone of a fully deleted session so it can be pushed again (`push --undelete`). */
export async function undeleteSession(store: BlobStore, account: string, session: string): Promise<boolean> {
  const tombKeys = await listAll(store, `${keys.tombstone(account, session)}/`);
  if (tombKeys.length === 0) return false;
  const left = await remaining(store, account, session, 1);
  if (left.shares.length || left.objects.length) {
    throw new SessyncError('conflict', `session ${session} is still being deleted on the server: run \`sessync rm ${session} --remote\` again to finish, then undelete`);
  }
  // The notes of shares the deletion could not revoke stay: such a share's link may still open, and only its
  // revocation (or its purge once expired) clears them, so deleting the session again still names it.
  await Promise.all(tombKeys.map((k) => store.delete(k)));
  return true;
}
