// POST /v1/batches: several sessions' batches in one request (frames, or JSON), each with the single-batch route's rules, one fsync round per step.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { LIMITS, type BatchEnvelope, type PushBatchesItem, type PushBatchesResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import type { BatchPush } from '../batch-validate.js';
import { readPushItems } from '../push-items.js';
import { withGroupCommit } from '../store/group-commit.js';
import { itemError } from '../item-error.js';
import { readAccountKey } from '../account-key.js';
import { mayBeNewSession, storeOneBatch } from '../store-batch.js';
import { TOKEN_MARK_MAX_OPS } from '../tokens.js';
import { WORKERS_SUBREQUESTS } from '../store/counted-store.js';
import type { BlobStore } from '../store/blob-store.js';
import { readQuota, sessionListingPages } from '../quota.js';

export const multiBatchesRoutes = new Hono<AppEnv>();

/**
 * Store calls of a request of new sessions' first batches before and after its batches, at most: the token's read and
 * mark (TOKEN_MARK_MAX_OPS), the account key, the quota, the account's heads (the session quota), the usage counter
 * read for the checks, and read and written once at the end (test/worker/request-store-calls.test.ts).
 */
const PER_REQUEST_OPS = 1 + TOKEN_MARK_MAX_OPS + 1 + 1 + 1 + 1 + 2;
/**
 * Store calls of a batch at most: a new session's first batch with a sealed meta (the meta, the heads, the tombstone;
 * the batch, the meta, the head), or a retried batch behind a head a crash left lagging (the meta, the host's heads,
 * one listing of its batches seq - 1 and seq; the stored batch's read, the head, the old head's removal).
 */
const PER_BATCH_OPS = 6;

/** Batches per request on Workers: as many as keep the request inside the plan's WORKERS_SUBREQUESTS (6: 12 + 6 x 6 = 48). */
export const WORKERS_MAX_BATCHES = Math.floor((WORKERS_SUBREQUESTS - PER_REQUEST_OPS) / PER_BATCH_OPS);

/**
 * On Workers, with a session quota: the account's heads are listed a thousand per call, and PER_REQUEST_OPS holds one
 * such call. They are listed only when a batch of the request may be of a new session (mayBeNewSession, from the
 * batch's own heads listing, which its push reuses): a push to existing sessions never lists them, however many the
 * account has. A request whose listing takes more holds fewer batches; it is refused whole, before anything is
 * stored, naming how many fit, and the client splits by that and sends again. The listing is shared with the
 * batches (read once). Past the point where not even one batch fits, the request is let through: no split would help it.
 */
async function fitHeadsListing(store: BlobStore, account: string, envelopes: readonly BatchEnvelope[], count: number): Promise<void> {
  const quota = await readQuota(store, account);
  if (quota?.maxSessions === undefined) return;
  const maybeNew = await Promise.all(envelopes.map((env) => mayBeNewSession(store, account, env)));
  if (!maybeNew.includes(true)) return;
  const pages = await sessionListingPages(store, account);
  if (pages <= 1) return;
  const fit = Math.floor((WORKERS_SUBREQUESTS - PER_REQUEST_OPS - (pages - 1)) / PER_BATCH_OPS);
  if (fit >= 1 && count > fit) {
    throw new SessyncError('too_large', `push batches: ${count} batches in one request, this server takes at most ${fit} for this account (its ${pages} pages of session heads count against the request's storage calls)`, { details: { maxBatches: fit } });
  }
}

function maxBatches(env: AppEnv['Bindings'] | undefined): number {
  const set = Number(env?.SESSYNC_MAX_BATCHES_PER_PUSH);
  if (Number.isInteger(set) && set >= 1) return Math.min(set, LIMITS.maxBatchesPerPush);
  return env?.BUCKET ? WORKERS_MAX_BATCHES : LIMITS.maxBatchesPerPush;
}

multiBatchesRoutes.post('/v1/batches', requireAccount, async (c) => {
  const items = await readPushItems(c, 'push batches', LIMITS.maxBatchesPerPush);
  const cap = maxBatches(c.env);
  if (items.length > cap) {
    // Refused whole, before anything is stored; the client splits by `maxBatches` and sends again.
    throw new SessyncError('too_large', `push batches: ${items.length} batches in one request, this server takes at most ${cap}`, { details: { maxBatches: cap } });
  }
  const results: (PushBatchesItem | null)[] = items.map(() => null);
  const ready: { index: number; req: BatchPush }[] = [];
  const sessions = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (!item.ok) {
      results[i] = itemError(item.error, `batches.${i}`);
      continue;
    }
    const session = item.push.envelope.session;
    // Two batches of one session would race each other's seq check: one per session, in order, is the client's job.
    if (sessions.has(session)) {
      results[i] = itemError(new SessyncError('bad_input', `push batches: batches.${i}: a second batch of session ${session} in one request; send it in the next request`), `batches.${i}`);
      continue;
    }
    sessions.add(session);
    ready.push({ index: i, req: item.push });
  }
  const store = c.var.store;
  const account = c.var.account;
  // Read once for the request: every batch of it is held to the same encryption rules, as the single route holds one.
  const accountKey = await readAccountKey(store, account);
  // Each batch validates in full before its first write, as on the single route; with a group commit no write of
  // any of them reaches the store before every one is validated (a task still validating holds the group).
  const settled = await withGroupCommit(
    store,
    ready.map((r) => (s) => storeOneBatch(s, account, r.req.envelope.session, r.req, accountKey)),
    c.env?.BUCKET ? (s) => fitHeadsListing(s, account, ready.map((r) => r.req.envelope), items.length) : undefined,
  );
  settled.forEach((s, k) => {
    const { index, req: item } = ready[k]!;
    results[index] = s.status === 'fulfilled' ? { ok: true, ...s.value } : itemError(s.reason, `POST /v1/batches: session ${item.envelope.session} seq ${item.envelope.seq}`);
  });
  const res: PushBatchesResponse = { results: results as PushBatchesItem[] };
  return c.json(res, 200);
});
