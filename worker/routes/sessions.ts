// GET /v1/sessions/:session: the session's metadata as first pushed, and the head of every host.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import type { SessionMetaResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { nameParam, notFoundSession, readMeta, sessionHeads } from '../session-data.js';

export const sessionsRoutes = new Hono<AppEnv>();

sessionsRoutes.get('/v1/sessions/:session', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const [meta, heads] = await Promise.all([readMeta(c.var.store, c.var.account, session), sessionHeads(c.var.store, c.var.account, session)]);
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
