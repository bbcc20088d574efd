// POST /v1/pulls: a page of several sessions in one request, each as the single pull route answers it, within one byte budget.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { LIMITS, PullManyRequestSchema, type PullManyItem, type PullManyResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { itemError, type ItemError } from '../item-error.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { keys } from '../../shared/keys.js';
import { framesResponse } from '../frames-response.js';
import { BatchReads, asJsonPage, errorFrame, pageFrames, planPage, readPage, wantsFrames, type ServedPage } from './pull.js';

/** Sessions whose heads and meta are read at once. */
const PLAN_PARALLEL = 16;
/** Sessions after the current one whose first batch is read ahead: bounded, as a request may stop at its byte budget. */
const READ_AHEAD = 4;

/** fn over items, at most `limit` at once, results in item order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export const multiPullRoutes = new Hono<AppEnv>();

multiPullRoutes.post('/v1/pulls', requireAccount, async (c) => {
  const req = await readJson(c, PullManyRequestSchema, SMALL_BODY_BYTES, 'pull sessions');
  // One session's page already needs up to ~43 storage calls (41, and its meta and tombstone when asked withMeta),
  // about all the Workers free plan allows per request.
  if (c.env?.BUCKET && req.sessions.length > 1) {
    throw new SessyncError('too_large', 'pull sessions: this server takes one session per request; pull each by POST /v1/sessions/:session/pull', { details: { maxSessions: 1 } });
  }
  const seen = new Set<string>();
  for (const s of req.sessions) {
    if (seen.has(s.session)) throw new SessyncError('bad_input', `pull sessions: session ${s.session} is named twice`);
    seen.add(s.session);
  }
  // Heads and metas of every session first, several at once (small reads); then the pages in order, within the
  // request's bytes, each session's first batch read while the ones before it are.
  const plans = await mapLimited(req.sessions, PLAN_PARALLEL, (s) =>
    planPage(c.var.store, c.var.account, s.session, s.cursor, s.withMeta === true).then((plan) => ({ plan }), (error: unknown) => ({ error })),
  );
  const reads = new BatchReads(c.var.store);
  const items: ({ page: ServedPage } | { session: string; error: ItemError })[] = [];
  let budget = LIMITS.maxPullBytes;
  // In order, each within what the ones before left of the request's bytes; once spent, the rest wait for the next request.
  for (let i = 0; i < req.sessions.length; i++) {
    const { session, cursor } = req.sessions[i]!;
    if (budget <= 0) {
      items.push({ page: { session, batches: [], cursor, more: true } });
      continue;
    }
    for (let k = i + 1; k < Math.min(plans.length, i + 1 + READ_AHEAD); k++) {
      const ahead = plans[k]!;
      const first = 'plan' in ahead ? ahead.plan.wanted[0] : undefined;
      if (first && 'plan' in ahead) reads.ahead(keys.batch(c.var.account, ahead.plan.session, first.host, first.seq));
    }
    try {
      const p = plans[i]!;
      if ('error' in p) throw p.error;
      const page = await readPage(c.var.account, p.plan, budget, reads);
      for (const b of page.batches) if (!('damaged' in b)) budget -= b.body.byteLength;
      items.push({ page });
    } catch (e) {
      items.push({ session, error: itemError(e, `POST /v1/pulls: session ${session}`) });
    }
  }
  if (wantsFrames(c)) return framesResponse(c, items.flatMap((x) => ('page' in x ? pageFrames(x.page) : [errorFrame(x.session, x.error)])));
  const results: PullManyItem[] = [];
  for (const x of items) results.push('page' in x ? { ok: true, session: x.page.session, ...(await asJsonPage(x.page)) } : { session: x.session, ...x.error });
  const res: PullManyResponse = { results };
  return c.json(res);
});
