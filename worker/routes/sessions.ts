// GET /v1/sessions/:session: the session's metadata and the head of every host; DELETE deletes it everywhere, undelete lifts that.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { DeleteSessionRequestSchema } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { loadSessionMeta, metaResponse } from '../meta-response.js';
import { nameParam } from '../session-data.js';
import { deleteSessionStep, undeleteSession } from '../session-delete.js';

export const sessionsRoutes = new Hono<AppEnv>();

sessionsRoutes.get('/v1/sessions/:session', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const { meta, heads } = await loadSessionMeta(c.var.store, c.var.account, session);
  return c.json(metaResponse(session, meta, heads));
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
