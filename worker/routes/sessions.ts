// GET /v1/sessions/:session: the session's metadata as first pushed, and the head of every host.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { SessionMetaResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { nameParam, notFoundSession, readMeta, sessionHeads } from '../session-data.js';

export const sessionsRoutes = new Hono<AppEnv>();

sessionsRoutes.get('/v1/sessions/:session', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const [meta, heads] = await Promise.all([readMeta(c.var.store, c.var.account, session), sessionHeads(c.var.store, c.var.account, session)]);
  if (!meta && heads.size === 0) throw notFoundSession(session);
  const header = meta?.header ?? {};
  const res: SessionMetaResponse = {
    session,
    header,
    // Batches pushed without meta still make a session; its project is then unknown.
    projectKey: meta?.projectKey ?? '',
    // The session's own creation time (header timestamp); the time of the first push when the header has none.
    created: typeof header.timestamp === 'string' ? header.timestamp : (meta?.created ?? ''),
    hosts: Object.fromEntries([...heads].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
  if (typeof header.cwd === 'string') res.cwd = header.cwd;
  if (meta?.name !== undefined) res.name = meta.name;
  return c.json(res);
});
