// POST /v1/batches: several sessions' batches in one request, each with the single-batch route's rules, one fsync round per step.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { LIMITS, PushBatchRequestSchema, PushBatchesRequestSchema, type PushBatchesItem, type PushBatchesResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { describeIssues, readJson } from '../request-body.js';
import { withGroupCommit } from '../store/group-commit.js';
import { preparePush, storePush, type PreparedPush } from './batches.js';

export const multiBatchesRoutes = new Hono<AppEnv>();

/** What a client learns of one item's failure: as the single route would answer it (server faults without their details). */
function itemError(e: unknown, where: string): PushBatchesItem {
  if (isSessyncError(e) && e.status < 500) return { ok: false, error: e.toJSON() };
  console.error(`sessync: POST /v1/batches: ${where}:`, isSessyncError(e) ? e.message : e);
  const code = isSessyncError(e) ? e.code : 'internal';
  const message = code === 'unavailable' ? 'the server cannot reach its storage right now; retry later (the server log has details)' : 'internal server error; the server log has details';
  return { ok: false, error: { code, message, retryable: isSessyncError(e) ? e.retryable : true } };
}

/** Batches per request on Workers: the free plan allows 50 storage calls per request, a batch costs about six. */
const WORKERS_MAX_BATCHES = 8;

function maxBatches(env: AppEnv['Bindings'] | undefined): number {
  const set = Number(env?.SESSYNC_MAX_BATCHES_PER_PUSH);
  if (Number.isInteger(set) && set >= 1) return Math.min(set, LIMITS.maxBatchesPerPush);
  return env?.BUCKET ? WORKERS_MAX_BATCHES : LIMITS.maxBatchesPerPush;
}

multiBatchesRoutes.post('/v1/batches', requireAccount, async (c) => {
  const req = await readJson(c, PushBatchesRequestSchema, LIMITS.maxRequestBytes, 'push batches');
  const cap = maxBatches(c.env);
  if (req.batches.length > cap) {
    // Refused whole, before anything is stored; the client splits by `maxBatches` and sends again.
    throw new SessyncError('too_large', `push batches: ${req.batches.length} batches in one request, this server takes at most ${cap}`, { details: { maxBatches: cap } });
  }
  const results: (PushBatchesItem | null)[] = req.batches.map(() => null);
  const ready: { index: number; push: PreparedPush }[] = [];
  const sessions = new Set<string>();
  // Every item is checked and serialised before the first write of any of them.
  for (let i = 0; i < req.batches.length; i++) {
    try {
      const parsed = PushBatchRequestSchema.safeParse(req.batches[i]);
      if (!parsed.success) throw new SessyncError('bad_input', `push batches: batches.${i}: ${describeIssues(parsed.error)}`);
      const session = parsed.data.envelope.session;
      // Two batches of one session would race each other's seq check: one per session, in order, is the client's job.
      if (sessions.has(session)) throw new SessyncError('bad_input', `push batches: batches.${i}: a second batch of session ${session} in one request; send it in the next request`);
      sessions.add(session);
      ready.push({ index: i, push: await preparePush(session, parsed.data) });
    } catch (e) {
      results[i] = itemError(e, `batches.${i}`);
    }
  }
  const account = c.var.account;
  const settled = await withGroupCommit(c.var.store, ready.map((r) => (store) => storePush(store, account, r.push)));
  settled.forEach((s, k) => {
    const { index, push } = ready[k]!;
    results[index] = s.status === 'fulfilled' ? { ok: true, ...s.value } : itemError(s.reason, `session ${push.session} seq ${push.envelope.seq}`);
  });
  const res: PushBatchesResponse = { results: results as PushBatchesItem[] };
  return c.json(res, 200);
});
