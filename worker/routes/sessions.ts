// GET /v1/sessions/:session: the session's metadata and the head of every host; DELETE deletes it everywhere, undelete lifts that.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { DeleteSessionRequestSchema, type SessionMetaResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { nameParam, notFoundSession, readMeta, sessionHeads } from '../session-data.js';
import { deleteSessionStep, findTombstone, goneSession, undeleteSession } from '../session-delete.js';

export const sessionsRoutes = new Hono<AppEnv>();

sessionsRoutes.get('/v1/sessions/:session', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const [meta, heads, tomb] = await Promise.all([
    readMeta(c.var.store, c.var.account, session),
    sessionHeads(c.var.store, c.var.account, session),
    findTombstone(c.var.store, c.var.account, session),
  ]);
  if (tomb) throw goneSession(tomb);
  if (!meta && heads.size === 0) throw notFoundSession(session);
  if (!meta) {
    // Batches without meta: a first push that has not finished (the meta is written before the head) or a client
    // that never sent one. An empty header and projectKey would send a pull to no project; say what is missing.
    throw new SessyncError(
      'not_found',
      `session ${session} has batches but no metadata (header, project) on this server yet: its first push has not finished; push it again with its header, or sync later`,
    );
  }
  const header = meta.header;
  const res: SessionMetaResponse = {
    session,
    header,
    projectKey: meta.projectKey,
    // The session's own creation time (header timestamp); the time of the first push when the header has none.
    created: typeof header.timestamp === 'string' ? header.timestamp : meta.created,
    hosts: Object.fromEntries([...heads].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
  if (typeof header.cwd === 'string') res.cwd = header.cwd;
  if (meta.name !== undefined) res.name = meta.name;
  return c.json(res);
});

// One bounded step of a deletion (see session-delete.ts): the client calls again while `complete` is false.
// Another account's session is a 404, exactly like a missing one.
sessionsRoutes.delete('/v1/sessions/:session', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const { host } = await readJson(c, DeleteSessionRequestSchema, SMALL_BODY_BYTES, 'delete session');
  return c.json(await deleteSessionStep(c.var.store, c.var.account, session, host));
});

sessionsRoutes.post('/v1/sessions/:session/undelete', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  // No tombstone: nothing to lift (a session never pushed, or not deleted); the push that follows works as usual.
  return c.json({ session, undeleted: await undeleteSession(c.var.store, c.var.account, session) });
});
