// POST /v1/pulls: a page of several sessions in one request, each as the single pull route answers it, within one byte budget.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { LIMITS, PullManyRequestSchema, type PullManyItem, type PullManyResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { itemError } from '../item-error.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { pullPage } from './pull.js';

export const multiPullRoutes = new Hono<AppEnv>();

multiPullRoutes.post('/v1/pulls', requireAccount, async (c) => {
  const req = await readJson(c, PullManyRequestSchema, SMALL_BODY_BYTES, 'pull sessions');
  // One session's page already needs up to ~41 storage calls, about all the Workers free plan allows per request.
  if (c.env?.BUCKET && req.sessions.length > 1) {
    throw new SessyncError('too_large', 'pull sessions: this server takes one session per request; pull each by POST /v1/sessions/:session/pull', { details: { maxSessions: 1 } });
  }
  const seen = new Set<string>();
  for (const s of req.sessions) {
    if (seen.has(s.session)) throw new SessyncError('bad_input', `pull sessions: session ${s.session} is named twice`);
    seen.add(s.session);
  }
  const results: PullManyItem[] = [];
  let budget = LIMITS.maxPullBytes;
  // In order, each within what the ones before left of the request's bytes; once spent, the rest wait for the next request.
  for (const { session, cursor } of req.sessions) {
    if (budget <= 0) {
      results.push({ ok: true, session, batches: [], cursor, more: true });
      continue;
    }
    try {
      const page = await pullPage(c.var.store, c.var.account, session, cursor, budget);
      for (const b of page.batches) budget -= b.body.length;
      results.push({ ok: true, session, ...page });
    } catch (e) {
      results.push({ session, ...itemError(e, `POST /v1/pulls: session ${session}`) });
    }
  }
  const res: PullManyResponse = { results };
  return c.json(res);
});
