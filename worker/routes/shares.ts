// Share routes: create, list and revoke (auth), fetch the ciphertext (the token is the capability), and the viewer page.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { BlobStore } from '../store/blob-store.js';
import { requireAccount } from '../auth.js';
import { findTombstone, goneSession } from '../session-delete.js';
import { readJson } from '../request-body.js';
import { sha256Hex } from '../sha256.js';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { SHARE_ID_RE, SHARE_TOKEN_RE, newShareId, newShareToken } from '../../shared/share-crypto.js';
import {
  CreateShareRequestSchema,
  LIMITS,
  type CreateShareResponse,
  type DamagedShareInfo,
  type ShareBlobResponse,
  type ShareInfo,
} from '../../shared/wire.js';
import { VIEWER_CSS, VIEWER_PAGE, viewerHeaders } from '../viewer/page.js';
import { VIEWER_SCRIPT } from '../viewer/viewer-bundle.js';
import { isDamagedRead, readShareIndexKeepingBytes, readShareRecord, readShareRecordKeepingBytes, type SessionSharePointer, type ShareIndexRecord, type ShareRecord } from '../share-records.js';
import { datesIn, ownerOfDamagedShareRecord, shareOfDamagedRecord, type SalvagedShare } from '../share-salvage.js';
import { isDeadShare, planSharesPage } from '../share-page.js';
import { listAll } from '../session-data.js';
import { TOKEN_MARK_MAX_OPS } from '../tokens.js';
import { WORKERS_SUBREQUESTS } from '../store/counted-store.js';

/** Longest a share may live; a link is a capability, and capabilities should not be forever. */
const MAX_LIFETIME_MS = 366 * 24 * 3600 * 1000;
/** Shares per list page: each is one read, and a Workers request may make WORKERS_SUBREQUESTS calls. */
const SHARES_PER_PAGE = 40;
/** Room for the JSON around the ciphertext. */
const ENVELOPE_BYTES = 64 * 1024;

const encoder = new TextEncoder();


function putJson(store: BlobStore, key: string, value: unknown): Promise<void> {
  return store.put(key, encoder.encode(JSON.stringify(value)));
}

function info(rec: ShareIndexRecord): ShareInfo {
  const { tokenHash: _hidden, ...rest } = rec;
  return rest;
}

function noStore(c: Context): void {
  c.header('Cache-Control', 'no-store');
  c.header('X-Robots-Tag', 'noindex, nofollow');
  c.header('Referrer-Policy', 'no-referrer');
}

export const sharesRoutes = new Hono<AppEnv>();

sharesRoutes.post('/v1/shares', requireAccount, async (c) => {
  const req = await readJson(c, CreateShareRequestSchema, LIMITS.maxShareBytes + ENVELOPE_BYTES, 'create share');
  if (req.ciphertext.length > LIMITS.maxShareBytes) {
    throw new SessyncError('too_large', `the share is ${req.ciphertext.length} bytes after encryption; the limit is ${LIMITS.maxShareBytes}. Share an earlier entry with --at`);
  }
  const now = Date.now();
  const expires = Date.parse(req.expiresAt);
  if (expires <= now) throw new SessyncError('bad_input', `expiresAt ${req.expiresAt} is in the past`);
  if (expires - now > MAX_LIFETIME_MS) throw new SessyncError('bad_input', 'a share may live at most 366 days; pass a shorter --expires');
  const account = c.var.account;
  const store = c.var.store;
  const token = newShareToken();
  const tokenHash = await sha256Hex(token);
  const id = newShareId();
  const created = new Date(now).toISOString();
  const expiresAt = new Date(expires).toISOString();
  const index: ShareIndexRecord = {
    id,
    tokenHash,
    ...(req.session === undefined ? {} : { session: req.session }),
    ...(req.entryId === undefined ? {} : { entryId: req.entryId }),
    ...(req.entryCount === undefined ? {} : { entryCount: req.entryCount }),
    created,
    expiresAt,
    revoked: false,
  };
  if (req.session !== undefined) {
    const tomb = await findTombstone(store, account, req.session);
    if (tomb) throw goneSession(tomb);
    // The session's pointer first: deleting the session finds (and revokes) every share that may have gone live.
    const pointer: SessionSharePointer = { id, tokenHash };
    await store.put(keys.sessionShare(account, req.session, id), encoder.encode(JSON.stringify(pointer)));
  }
  // Index first: a failure between the two writes leaves a listed share with no blob (404), never an unlisted live one.
  if (!(await store.putIfAbsent(keys.accountShare(account, id), encoder.encode(JSON.stringify(index))))) {
    throw new SessyncError('conflict', 'share id collision: try again', { retryable: true });
  }
  const record: ShareRecord = { id, account, created, expiresAt, ciphertext: req.ciphertext };
  if (!(await store.putIfAbsent(keys.share(tokenHash), encoder.encode(JSON.stringify(record))))) {
    // 256 random bits do not collide; if the store says they did, refuse rather than overwrite someone's share.
    throw new SessyncError('internal', 'share token collision: refusing to reuse a share record');
  }
  const url = `${new URL(c.req.url).origin}/s/${token}`;
  const body: CreateShareResponse = { token, id, url, expiresAt };
  noStore(c);
  return c.json(body, 201);
});

/**
 * Calls a page may make past its index entries, to find the share records of damaged entries (one read each, see
 * shareOfDamagedRecord) and to purge dead shares (2 or 3 writes each): a page of sound shares costs the token's read
 * (and, on its first use of the day, up to TOKEN_MARK_MAX_OPS calls to mark it), the list and a read per entry; what is
 * left of the request's subrequests is this, so every page stays inside them. At least MAX_PURGE_OPS (share-page.ts),
 * so a page always takes its first entry, and the list gets past it.
 */
export const SHARES_PAGE_EXTRA_OPS = WORKERS_SUBREQUESTS - 1 - TOKEN_MARK_MAX_OPS - 1 - SHARES_PER_PAGE;

/**
 * What the list says of a share whose index entry is damaged (logged by the read): what its share record says, when
 * the damaged bytes still lead to it (see shareOfDamagedRecord), and what its owner can do either way.
 */
function damagedInfo(account: string, id: string, found: SalvagedShare | null): DamagedShareInfo {
  console.error(`sessync: the share index record at ${keys.accountShare(account, id)} is listed as damaged (${found ? `its share record is at ${keys.share(found.tokenHash)}${found.record ? '' : found.missing ? ', never written' : ', damaged too'}` : 'its share record cannot be found'})`);
  if (!found) {
    return {
      id,
      revocableById: false,
      message: `its record on this server is damaged, so the server cannot find its link (which may still open) from its id: revoke it by the link (\`sessync unshare <link>\`), or ask the server's admin`,
    };
  }
  const { record } = found;
  if (found.missing) {
    return {
      id,
      revocableById: true,
      message: `its index record on this server is damaged and its making stopped before its share record was written, so its link never opened (it answers 404): \`sessync unshare ${id}\` removes the damaged record`,
    };
  }
  if (!record) {
    return {
      id,
      revocableById: true,
      message: `its index record and its share record on this server are both damaged, so its link cannot open: \`sessync unshare ${id}\` revokes it and removes the damaged records`,
    };
  }
  return {
    id,
    created: record.created,
    expiresAt: record.expiresAt,
    revoked: record.revoked !== undefined,
    revocableById: true,
    message: `its index record on this server is damaged (its session and entry count are lost): \`sessync unshare ${id}\` revokes it and removes the damaged record`,
  };
}

sharesRoutes.get('/v1/shares', requireAccount, async (c) => {
  const store = c.var.store;
  const account = c.var.account;
  const prefix = keys.accountSharesPrefix(account);
  // The page token is the id of the last share of the previous page: it can only point into this account's index.
  const page = c.req.query('page');
  if (page !== undefined && !SHARE_ID_RE.test(page)) throw new SessyncError('bad_input', 'page is not a page token from a previous GET /v1/shares');
  const listed = await store.list({ prefix, limit: SHARES_PER_PAGE, ...(page === undefined ? {} : { startAfter: keys.accountShare(account, page) }) });
  const read = await Promise.all(listed.keys.map(async (k) => ({ id: k.slice(prefix.length), rec: await readShareIndexKeepingBytes(store, k) })));
  // One damaged entry must not hide the account's other shares, nor itself: its owner must be able to see and revoke
  // it. Finding its share record costs a read, and purging a dead share (housekeeping, lazily here: an expired or
  // revoked share loses its ciphertext and leaves the list) costs writes: what the page's budget holds of both, in
  // key order (see planSharesPage). Dead shares past it are left out of the list all the same, and purged by a later one.
  const now = Date.now();
  const { end, purge } = planSharesPage(read, SHARES_PAGE_EXTRA_OPS, now);
  const kept = read.slice(0, end);
  const damaged = await Promise.all(kept.map(async ({ id, rec }) => (isDamagedRead(rec) ? damagedInfo(account, id, await shareOfDamagedRecord(store, account, id, rec.damaged)) : null)));
  const live = kept.flatMap((r) => (r.rec === null || isDamagedRead(r.rec) || isDeadShare(r.rec, now) ? [] : [r.rec]));
  await Promise.all(purge.map((r) => purgeShare(store, account, r, r.revoked ? {} : { reason: 'expired' })));
  const shares = live.map(info);
  shares.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
  const last = kept[kept.length - 1];
  const more = end < read.length || listed.cursor !== undefined;
  return c.json({ shares, ...(damaged.some((d) => d) ? { damaged: damaged.filter((d): d is DamagedShareInfo => d !== null) } : {}), ...(more && last ? { nextPage: last.id } : {}) });
});

/**
 * Revokes (or, for `expired`, purges) a share: the record keeps only its dates and the reason, so the link answers
 * 410 and the server holds nothing of the shared session; the index entry and the session's pointer go, so it
 * leaves the share list. Record first: a failure after it leaves a listed share that is already dead, and the
 * next list purges it. `notes`: the share's index entry was (or may be) damaged, so a session's deletion may have
 * noted it as unrevoked: the note goes before the entry, so a retry of a revocation cut short finds the share again. `record:
 * false`: the record is a tombstone already, and keeps what it says (when, and why: a deleted session's stays so).
 */
async function purgeShare(store: BlobStore, account: string, index: ShareIndexRecord, opts: { reason?: ShareRecord['reason']; notes?: boolean; record?: false } = {}): Promise<void> {
  if (opts.record !== false) await putJson(store, keys.share(index.tokenHash), revokedRecord(account, index, opts.reason));
  if (opts.notes) await dropUnrevokedNotes(store, account, index.id);
  await store.delete(keys.accountShare(account, index.id));
  if (index.session !== undefined) await store.delete(keys.sessionShare(account, index.session, index.id));
}

/** The tombstone that replaces a share record: its dates and why, nothing of the shared session. */
function revokedRecord(account: string, index: ShareIndexRecord, reason?: ShareRecord['reason']): ShareRecord {
  return { id: index.id, account, created: index.created, expiresAt: index.expiresAt, revoked: new Date().toISOString(), ...(reason ? { reason } : {}) };
}

/** Removes the notes that a session's deletion could not revoke share `id` (see deleteSessionStep): it is revoked now. */
async function dropUnrevokedNotes(store: BlobStore, account: string, id: string): Promise<void> {
  const notes = (await listAll(store, keys.unrevokedPrefix(account))).filter((k) => k.endsWith(`/${id}`));
  await Promise.all(notes.map((k) => store.delete(k)));
}

/** A share found only through damaged records: what a revocation needs of it, and that notes of it may exist. */
interface FoundShare {
  index: ShareIndexRecord;
  /** Its index entry was damaged (or is gone): a deletion of its session may have noted it as unrevoked. */
  damagedIndex: boolean;
  /** The entry of its id belongs to another share (records made by hand): only the share record is replaced. */
  recordOnly?: true;
  /** Its share record is revoked already: it stays as it is, only what still lists the share goes. */
  revoked?: true;
}

/** What a revocation writes for a share whose share record is damaged: dates its bytes still hold, else now. */
function fromDamagedRecord(id: string, tokenHash: string, bytes: Uint8Array | undefined): ShareIndexRecord {
  return { id, tokenHash, ...datesIn(bytes, new Date().toISOString()), revoked: false };
}

/** The answer when no record says whose a damaged share record is: truthful about the link, and about who can help. */
function unownedDamagedRecord(tokenHash: string): SessyncError {
  console.error(`sessync: the share record at ${keys.share(tokenHash)} is damaged and names no account or share id that leads to the caller's index: not revoked`);
  return new SessyncError(
    'corrupt',
    "the share record stored on this server is damaged so that the server cannot tell from the link whose share it is: the link cannot open (it answers 422 to anyone). Revoke it by its id if `sessync shares` lists it (`sessync unshare <id>` replaces the record); if it is not listed, or listed as not revocable by its id, only the server's admin can remove the record (its key is in the server's log)",
    { retryable: false },
  );
}

/**
 * The caller's share for an id or a token; null when it is not theirs (callers answer 404 either way). A damaged
 * index entry by id, or a damaged share record by token, is worked round through the other record when that confirms
 * it is the caller's; a damaged share record named by the caller's own records is replaced by the revocation's
 * tombstone, so its link answers like any revoked one. Otherwise a 422 `corrupt` says what can still be done.
 */
async function findOwnShare(store: BlobStore, account: string, idOrToken: string): Promise<FoundShare | null> {
  if (SHARE_ID_RE.test(idOrToken)) {
    const indexKey = keys.accountShare(account, idOrToken);
    const rec = await readShareIndexKeepingBytes(store, indexKey);
    if (rec === null) return null;
    if (!isDamagedRead(rec)) return { index: rec, damagedIndex: false };
    // A damaged entry whose bytes still lead to its share record (see shareOfDamagedRecord): revoked through that
    // record, as by the link below. Otherwise the 422 stands: it says to revoke by the link.
    const found = await shareOfDamagedRecord(store, account, idOrToken, rec.damaged);
    if (!found) throw rec.error;
    console.error(`sessync: the share index record at ${indexKey} is damaged: revoking through the share record at ${keys.share(found.tokenHash)} instead${found.record ? '' : found.missing ? ' (never written: the tombstone is written there)' : ' (damaged too: replaced by the tombstone)'}`);
    const index = found.record
      ? { id: idOrToken, tokenHash: found.tokenHash, created: found.record.created, expiresAt: found.record.expiresAt, revoked: false }
      : fromDamagedRecord(idOrToken, found.tokenHash, found.bytes);
    return { index, damagedIndex: true, ...(found.record?.revoked !== undefined ? { revoked: true as const } : {}) };
  }
  if (!SHARE_TOKEN_RE.test(idOrToken)) return null;
  const tokenHash = await sha256Hex(idOrToken);
  const rec = await readShareRecordKeepingBytes(store, tokenHash);
  if (rec === null) return null;
  let id: string;
  if (isDamagedRead(rec)) {
    // The link names the record, but only the record says whose it is: what its bytes still say, confirmed.
    const owner = await ownerOfDamagedShareRecord(store, account, tokenHash, rec.damaged);
    if (owner === 'theirs') return null;
    if (owner === 'unknown') throw unownedDamagedRecord(tokenHash);
    id = owner.id;
  } else {
    if (rec.account !== account) return null;
    id = rec.id;
  }
  const indexKey = keys.accountShare(account, id);
  const index = await readShareIndexKeepingBytes(store, indexKey);
  // No entry: revoked already (its revocation removed it), so the link leaves nothing to revoke.
  if (index === null && !isDamagedRead(rec)) return null;
  if (index !== null && !isDamagedRead(index)) {
    if (index.tokenHash === tokenHash) return { index, damagedIndex: false, ...(!isDamagedRead(rec) && rec.revoked !== undefined ? { revoked: true as const } : {}) };
    // The entry of that id is another share's: only this link's record is replaced, the entry (and its share) stay.
    console.error(`sessync: the share record at ${keys.share(tokenHash)} names share ${id}, whose index record names another link: revoking the record alone`);
    return { index: { ...index, tokenHash }, damagedIndex: false, recordOnly: true };
  }
  // A damaged index entry (logged by the read), or none for a damaged record: the share record says all a revocation
  // needs but the session, so the session's pointer to it stays; deleting the session later finds the share already
  // revoked and only re-marks it.
  console.error(`sessync: the share index record at ${indexKey} is ${index === null ? 'missing' : 'damaged'}: revoking through the share record at ${keys.share(tokenHash)} instead`);
  const found = isDamagedRead(rec) ? fromDamagedRecord(id, tokenHash, rec.damaged) : { id, tokenHash, created: rec.created, expiresAt: rec.expiresAt, revoked: false };
  return { index: found, damagedIndex: true, ...(!isDamagedRead(rec) && rec.revoked !== undefined ? { revoked: true as const } : {}) };
}

sharesRoutes.delete('/v1/shares/:idOrToken', requireAccount, async (c) => {
  const store = c.var.store;
  const account = c.var.account;
  const found = await findOwnShare(store, account, c.req.param('idOrToken'));
  if (!found) throw new SessyncError('not_found', 'no share of yours has that id or token (revoked and expired shares leave the list); `sessync shares` lists them');
  if (found.recordOnly) await putJson(store, keys.share(found.index.tokenHash), revokedRecord(account, found.index));
  else await purgeShare(store, account, found.index, { notes: found.damagedIndex, ...(found.revoked ? { record: false as const } : {}) });
  return c.json({ revoked: true as const, id: found.index.id });
});

/** The live share record of a token; 404 for a malformed or unknown token, 410 for a revoked or expired one. */
async function liveShare(store: BlobStore, token: string): Promise<ShareRecord> {
  const missing = new SessyncError('not_found', 'this share link does not exist: check that the whole link was copied');
  if (!SHARE_TOKEN_RE.test(token)) throw missing;
  // A damaged record is a 422 `corrupt` (logged with its key) saying how the owner mends it.
  const rec = await readShareRecord(store, await sha256Hex(token));
  if (!rec) throw missing;
  if (rec.reason === 'session_deleted') throw new SessyncError('gone', 'the session of this share was deleted by its owner');
  if (rec.reason === 'expired' || (!rec.revoked && Date.parse(rec.expiresAt) <= Date.now())) {
    // Housekeeping, lazily here too: an expired share read by its link loses its ciphertext now. Its notes go with its
    // index entry: a session's deletion may have noted it (its entry damaged), and once the entry is gone nothing would
    // find the share to clear them, so they would warn of a dead link for ever.
    if (rec.ciphertext !== undefined) await purgeShare(store, rec.account, { id: rec.id, tokenHash: await sha256Hex(token), created: rec.created, expiresAt: rec.expiresAt, revoked: false }, { reason: 'expired', notes: true });
    throw new SessyncError('gone', `this share expired at ${rec.expiresAt}`);
  }
  if (rec.revoked) throw new SessyncError('gone', 'this share was revoked by its owner');
  return rec;
}

sharesRoutes.get('/v1/shares/:token/blob', async (c) => {
  noStore(c);
  const rec = await liveShare(c.var.store, c.req.param('token'));
  if (rec.ciphertext === undefined) {
    // Live but without its ciphertext: damaged like a record that does not parse, and mended the same way.
    console.error(`sessync: the share record of share ${rec.id} (account ${rec.account}) is damaged (live, without its ciphertext)`);
    throw new SessyncError('corrupt', 'the share record stored on this server is damaged (live, without its ciphertext); the link cannot be opened; its owner can revoke it by its id (`sessync unshare <id>` replaces the record) and share the session again', { retryable: false });
  }
  const body: ShareBlobResponse = { ciphertext: rec.ciphertext, expiresAt: rec.expiresAt, id: rec.id };
  return c.json(body);
});

// The viewer: one static page for every token (it never looks the token up), its script and its style.
sharesRoutes.get('/s/assets/viewer.js', (c) => {
  for (const [k, v] of Object.entries(viewerHeaders('application/javascript; charset=utf-8'))) c.header(k, v);
  return c.body(VIEWER_SCRIPT);
});

sharesRoutes.get('/s/assets/viewer.css', (c) => {
  for (const [k, v] of Object.entries(viewerHeaders('text/css; charset=utf-8'))) c.header(k, v);
  return c.body(VIEWER_CSS);
});

sharesRoutes.get('/s/:token', async (c) => {
  for (const [k, v] of Object.entries(viewerHeaders('text/html; charset=utf-8'))) c.header(k, v);
  // The page is the same for every token, but a link should not be cached by anything between.
  c.header('Cache-Control', 'no-store');
  // Its status says what the page's script will show: 404 unknown, 410 revoked or expired, 422 a damaged record (the
  // script reads the blob's message).
  let status: 200 | 404 | 410 | 422 = 200;
  try {
    await liveShare(c.var.store, c.req.param('token'));
  } catch (e) {
    if (!(e instanceof SessyncError) || (e.code !== 'not_found' && e.code !== 'gone' && e.code !== 'corrupt')) throw e;
    status = e.code === 'gone' ? 410 : e.code === 'corrupt' ? 422 : 404;
  }
  return c.body(VIEWER_PAGE, status);
});
