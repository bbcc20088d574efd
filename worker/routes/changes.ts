// GET /v1/changes?page=: every (session, host) head of the account, so one request answers a no-op sync of many sessions.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { keys, parseHeadKey } from '../../shared/keys.js';
import { LIMITS, type ChangesResponse, type Head } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { listTombstones } from '../session-delete.js';

export const changesRoutes = new Hono<AppEnv>();

/** A page token is the last head key returned, relative to the account's heads prefix: `session/host/seq`. */
const PAGE_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}\/[A-Za-z0-9][A-Za-z0-9_-]{0,127}\/\d{12}$/;

changesRoutes.get('/v1/changes', requireAccount, async (c) => {
  const store = c.var.store;
  const account = c.var.account;
  const prefix = keys.headsPrefix(account);
  const page = c.req.query('page');
  if (page !== undefined && !PAGE_RE.test(page)) {
    throw new SessyncError('bad_input', 'page token is not one this server returned: pass nextPage from the previous /v1/changes answer, or omit it');
  }
  // startAfter (not the store's opaque cursor) keeps the token meaningful on every backend and confined to the prefix.
  // Deleted sessions: their heads are hidden (a deletion in progress never shows half a session) and the
  // tombstones listed, so one request still answers a no-op sync and tells every machine what was deleted.
  const tombstones = await listTombstones(store, account);
  const bySessionHost = new Map<string, Head>();
  let lastKey: string | undefined;
  let cursor: string | undefined;
  let first = true;
  let count = 0;
  let more = false;
  while (first || cursor !== undefined) {
    const limit = Math.min(1000, LIMITS.maxHeadsPerPage - count);
    const res = first
      ? await store.list(page === undefined ? { prefix, limit } : { prefix, startAfter: prefix + page, limit })
      : await store.list({ prefix, cursor: cursor!, limit });
    first = false;
    for (const key of res.keys) {
      lastKey = key;
      count++;
      const h = parseHeadKey(account, key);
      if (!h || tombstones.has(h.session)) continue; // not a head key, or a session being deleted
      const id = `${h.session}/${h.host}`;
      const prev = bySessionHost.get(id);
      if (!prev || prev.seq < h.seq) bySessionHost.set(id, h);
    }
    cursor = res.cursor;
    if (count >= LIMITS.maxHeadsPerPage) {
      more = cursor !== undefined;
      break;
    }
  }
  const body: ChangesResponse = { heads: [...bySessionHost.values()] };
  if (tombstones.size) body.deleted = [...tombstones.values()];
  if (more && lastKey) body.nextPage = lastKey.slice(prefix.length);
  return c.json(body);
});
