// Share routes: create, list and revoke (auth), fetch the ciphertext (the token is the capability), and the viewer page.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { BlobStore } from '../store/blob-store.js';
import { requireAccount } from '../auth.js';
import { findTombstone, goneSession } from '../session-delete.js';
import { readJson } from '../request-body.js';
import { sha256Hex } from '../sha256.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
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
import { orDamaged, readShareIndex, readShareRecord, shareOfDamagedIndex, type SessionSharePointer, type ShareIndexRecord, type ShareRecord } from '../share-records.js';

/** Longest a share may live; a link is a capability, and capabilities should not be forever. */
const MAX_LIFETIME_MS = 366 * 24 * 3600 * 1000;
/** Shares per list page: each is one read, and a Workers request may make about 50. */
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
 * What the list says of a share whose index entry is damaged (logged by the read): what its share record says, when
 * the damaged bytes still lead to it (see shareOfDamagedIndex), and what its owner can do either way.
 */
async function damagedInfo(store: BlobStore, account: string, id: string): Promise<DamagedShareInfo> {
  const found = await shareOfDamagedIndex(store, account, id);
  console.error(`sessync: the share index record at ${keys.accountShare(account, id)} is listed as damaged (${found ? `its share record is at ${keys.share(found.tokenHash)}` : 'its share record cannot be found'})`);
  if (!found) {
    return {
      id,
      revocableById: false,
      message: `its record on this server is damaged, so the server cannot find its link (which may still open) from its id: revoke it by the link (\`sessync unshare <link>\`), or ask the server's admin`,
    };
  }
  const { record } = found;
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
  const prefix = keys.accountSharesPrefix(c.var.account);
  // The page token is the id of the last share of the previous page: it can only point into this account's index.
  const page = c.req.query('page');
  if (page !== undefined && !SHARE_ID_RE.test(page)) throw new SessyncError('bad_input', 'page is not a page token from a previous GET /v1/shares');
  const listed = await store.list({ prefix, limit: SHARES_PER_PAGE, ...(page === undefined ? {} : { startAfter: keys.accountShare(c.var.account, page) }) });
  const read = await Promise.all(listed.keys.map(async (k) => ({ id: k.slice(prefix.length), rec: await orDamaged(readShareIndex(store, k)) })));
  // One damaged entry must not hide the account's other shares, nor itself: its owner must be able to see and revoke it.
  const damaged = await Promise.all(read.filter((r) => r.rec === 'damaged').map((r) => damagedInfo(store, c.var.account, r.id)));
  const recs = read.map((r) => (r.rec === 'damaged' ? null : r.rec));
  // Housekeeping, lazily here: an expired or revoked share loses its ciphertext and leaves the list.
  const now = Date.now();
  const live = recs.filter((r): r is ShareIndexRecord => r !== null && !r.revoked && Date.parse(r.expiresAt) > now);
  const dead = recs.filter((r): r is ShareIndexRecord => r !== null && !live.includes(r));
  await Promise.all(dead.map((r) => purgeShare(store, c.var.account, r, r.revoked ? undefined : 'expired')));
  const shares = live.map(info);
  shares.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
  const last = listed.keys[listed.keys.length - 1];
  return c.json({ shares, ...(damaged.length ? { damaged } : {}), ...(listed.cursor === undefined || last === undefined ? {} : { nextPage: last.slice(prefix.length) }) });
});

/**
 * Revokes (or, for `expired`, purges) a share: the record keeps only its dates and the reason, so the link answers
 * 410 and the server holds nothing of the shared session; the index entry and the session's pointer go, so it
 * leaves the share list. Record first: a failure after it leaves a listed share that is already dead, and the
 * next list purges it.
 */
async function purgeShare(store: BlobStore, account: string, index: ShareIndexRecord, reason?: ShareRecord['reason']): Promise<void> {
  const tomb: ShareRecord = { id: index.id, account, created: index.created, expiresAt: index.expiresAt, revoked: new Date().toISOString(), ...(reason ? { reason } : {}) };
  await putJson(store, keys.share(index.tokenHash), tomb);
  await store.delete(keys.accountShare(account, index.id));
  if (index.session !== undefined) await store.delete(keys.sessionShare(account, index.session, index.id));
}

/**
 * The caller's index record for an id or a token; null when it is not theirs (callers answer 404 either way). A damaged
 * index entry by id (unless its bytes still lead to the share record), or a damaged share record by token, is a 422
 * `corrupt` saying to revoke it the other way.
 */
async function findOwnShare(store: BlobStore, account: string, idOrToken: string): Promise<ShareIndexRecord | null> {
  if (SHARE_ID_RE.test(idOrToken)) {
    const indexKey = keys.accountShare(account, idOrToken);
    try {
      return await readShareIndex(store, indexKey);
    } catch (e) {
      if (!isSessyncError(e, 'corrupt')) throw e;
      // A damaged entry whose bytes still lead to its share record (confirmed by it): revoked through that record, as
      // by the link below. Otherwise the 422 stands: it says to revoke by the link.
      const found = await shareOfDamagedIndex(store, account, idOrToken);
      if (!found) throw e;
      console.error(`sessync: the share index record at ${indexKey} is damaged: revoking through the share record at ${keys.share(found.tokenHash)} instead`);
      return { id: idOrToken, tokenHash: found.tokenHash, created: found.record.created, expiresAt: found.record.expiresAt, revoked: false };
    }
  }
  if (!SHARE_TOKEN_RE.test(idOrToken)) return null;
  const tokenHash = await sha256Hex(idOrToken);
  const rec = await readShareRecord(store, tokenHash, true);
  if (!rec || rec.account !== account) return null;
  const indexKey = keys.accountShare(account, rec.id);
  try {
    return await readShareIndex(store, indexKey);
  } catch (e) {
    if (!isSessyncError(e, 'corrupt')) throw e;
  }
  // A damaged index entry (logged by the read): the share record says all a revocation needs but the session, so the
  // session's pointer to it stays; deleting the session later finds the share already revoked and only re-marks it.
  console.error(`sessync: the share index record at ${indexKey} is damaged: revoking through the share record at ${keys.share(tokenHash)} instead`);
  return { id: rec.id, tokenHash, created: rec.created, expiresAt: rec.expiresAt, revoked: false };
}

sharesRoutes.delete('/v1/shares/:idOrToken', requireAccount, async (c) => {
  const store = c.var.store;
  const account = c.var.account;
  const index = await findOwnShare(store, account, c.req.param('idOrToken'));
  if (!index) throw new SessyncError('not_found', 'no share of yours has that id or token (revoked and expired shares leave the list); `sessync shares` lists them');
  await purgeShare(store, account, index);
  return c.json({ revoked: true as const, id: index.id });
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
    // Housekeeping, lazily here too: an expired share read by its link loses its ciphertext now.
    if (rec.ciphertext !== undefined) await purgeShare(store, rec.account, { id: rec.id, tokenHash: await sha256Hex(token), created: rec.created, expiresAt: rec.expiresAt, revoked: false }, 'expired');
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
