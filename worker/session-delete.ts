// Deleting a session everywhere: tombstone first, then its shares, heads, batches and meta, in bounded steps a retry resumes.
import type { BlobStore } from './store/blob-store.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { keys } from '../shared/keys.js';
import { NAME_RE, type DeleteSessionResponse, type Tombstone, type UnrevokedShare } from '../shared/wire.js';
import { batchBytes, encodeJson, keyExists, listAll, notFoundSession, readBatch, sessionHeads } from './session-data.js';
import { addBytes, readQuota } from './quota.js';
import { orDamaged, readSessionSharePointer, readShareIndex, readShareRecordToReplace, shareOfDamagedIndex, shareOfDamagedRecord } from './share-records.js';

/**
 * Store operations one step may make: a Workers request may make about 50 subrequests, so a session of many
 * batches is deleted over several calls (each answers `complete: false` until the last).
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

/**
 * The token hash of the share a session pointer names, or null when there is no live share to revoke. A damaged
 * pointer (logged by its read) is worked round: the share's id is in the pointer's key, and its index entry holds the
 * hash too; failing that, a hash the damaged bytes still hold, if its share record confirms it. `unknown` when
 * nothing leads to the share record: its link may still open, and only its owner (who has the link) can revoke it.
 */
async function pointedShare(store: BlobStore, account: string, id: string, pointerKey: string): Promise<string | null | 'unknown'> {
  const p = await orDamaged(readSessionSharePointer(store, pointerKey));
  if (p === null) return null;
  if (p !== 'damaged' && p.id === id) return p.tokenHash;
  const fromPointer = await shareOfDamagedRecord(store, account, id, (await store.get(pointerKey))?.body);
  if (fromPointer) return fromPointer.tokenHash;
  const index = await orDamaged(readShareIndex(store, keys.accountShare(account, id)));
  // No index entry: revoked already (a revocation removes it before the pointer) or never made live (made after it).
  if (index === null) return null;
  if (index !== 'damaged') return index.tokenHash;
  return (await shareOfDamagedIndex(store, account, id))?.tokenHash ?? 'unknown';
}

/**
 * Revokes one share of the deleted session: its ciphertext goes, the link answers 410, it leaves the share list.
 * Returns the share's id when it could not be revoked (see pointedShare): the deletion goes on, and says so.
 */
async function revokeSessionShare(store: BlobStore, account: string, session: string, pointerKey: string): Promise<string | null> {
  const id = pointerKey.slice(`${keys.sessionPrefix(account, session)}shares/`.length);
  const tokenHash = await pointedShare(store, account, id, pointerKey);
  if (tokenHash === 'unknown') {
    console.error(`sessync: the share pointer at ${pointerKey} and the share index record at ${keys.accountShare(account, id)} are damaged: share ${id} of the deleted session ${session} could not be revoked (its link may still open)`);
  } else if (tokenHash !== null) {
    const now = new Date().toISOString();
    // A damaged share record (logged by the read) is replaced by the tombstone like any other: refusing here, after
    // the session's tombstone, would leave the session hidden with its other shares and batches still stored.
    const old: { created?: string; expiresAt?: string } = (await readShareRecordToReplace(store, tokenHash)) ?? {};
    await store.put(keys.share(tokenHash), encodeJson({ id, account, created: old.created ?? now, expiresAt: old.expiresAt ?? now, revoked: now, reason: 'session_deleted' }));
    await store.delete(keys.accountShare(account, id));
  }
  await store.delete(pointerKey);
  return tokenHash === 'unknown' ? id : null;
}

/** What the owner of a share the deletion could not revoke can do. */
function notRevoked(session: string, id: string): UnrevokedShare {
  return {
    id,
    message: `share ${id} of session ${session} could not be revoked: its records on the server are damaged, so the server cannot find its link, which may still open. Revoke it by the link (\`sessync unshare <link>\`); \`sessync shares\` lists it as damaged until then`,
  };
}

async function inChunks(items: readonly string[], fn: (k: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL) await Promise.all(items.slice(i, i + PARALLEL).map(fn));
}

/**
 * One step of deleting `session`. The tombstone is written before anything is removed: from then on the changes
 * feed hides the session and pushes to it are refused, so an interruption at any later point leaves a session
 * nobody is offered, and the next call (the client retries) carries on from what is left. Before the tombstone
 * nothing is touched, so an interruption there leaves the session whole and listed.
 */
export async function deleteSessionStep(store: BlobStore, account: string, session: string, host: string, budget = DELETE_STEP_OPS): Promise<DeleteSessionResponse> {
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
  const sharesNotRevoked: UnrevokedShare[] = [];
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
  // Counted so far: the tombstone lookup (and write), the quota read; below, each look at what is left is up to 4 lists.
  let ops = 4;
  const batchPrefix = `${keys.sessionPrefix(account, session)}b/`;
  const finish = async (complete: boolean): Promise<DeleteSessionResponse> => {
    if (freed > 0) await addBytes(store, account, -freed);
    return { session, deletedAt: tomb.deletedAt, host: tomb.host, complete, removed, sharesRevoked, ...(sharesNotRevoked.length ? { sharesNotRevoked } : {}) };
  };
  for (;;) {
    const left = await remaining(store, account, session, Math.max(1, Math.min(100, budget - ops)));
    ops += 4;
    if (left.shares.length === 0 && left.objects.length === 0) return finish(true);
    if (ops >= budget) break;
    const shares = left.shares.slice(0, Math.max(1, Math.floor((budget - ops) / 5)));
    await inChunks(shares, async (k) => {
      const unrevoked = await revokeSessionShare(store, account, session, k);
      if (unrevoked === null) sharesRevoked++;
      else {
        sharesNotRevoked.push(notRevoked(session, unrevoked));
        removed++; // its pointer went: progress, also for a client that knows nothing of sharesNotRevoked
      }
    });
    ops += shares.length * 5; // a damaged pointer costs up to 3 reads more: within the margin to the ~50 a Worker may make
    const objects = left.objects.slice(0, Math.max(0, Math.floor((budget - ops) / perObject)));
    await inChunks(objects, async (k) => {
      if (quotaOn && k.startsWith(batchPrefix)) {
        const size = batchBytes(await readBatch(store, k));
        freed += size; // after the await: `freed += await ...` would read freed before it and lose parallel adds
      }
      await store.delete(k);
    });
    removed += objects.length;
    ops += objects.length * perObject;
    if (ops >= budget) break;
  }
  return finish(false);
}

/** Drops the tombstone of a fully deleted session so it can be pushed again (`push --undelete`). */
export async function undeleteSession(store: BlobStore, account: string, session: string): Promise<boolean> {
  const tombKeys = await listAll(store, `${keys.tombstone(account, session)}/`);
  if (tombKeys.length === 0) return false;
  const left = await remaining(store, account, session, 1);
  if (left.shares.length || left.objects.length) {
    throw new SessyncError('conflict', `session ${session} is still being deleted on the server: run \`sessync rm ${session} --remote\` again to finish, then undelete`);
  }
  await Promise.all(tombKeys.map((k) => store.delete(k)));
  return true;
}
