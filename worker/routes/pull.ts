// POST /v1/sessions/:session/pull: the batches after a per-host cursor, in host then seq order, paginated.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { BlobStore } from '../store/blob-store.js';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { LIMITS, PullRequestSchema, type Cursor, type PulledBatch, type PullResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { asJsonBatch, isDamaged, nameParam, notFoundSession, readBatch, sessionHeads } from '../session-data.js';

export const pullRoutes = new Hono<AppEnv>();

/** The sha-256 a damaged batch is served with: no body hashes to it, so every client skips the batch. */
const NO_SHA = '0'.repeat(64);

/** Batches fetched at once: enough to hide store latency, few enough for Workers' subrequest limits. */
const PARALLEL_GETS = 8;

pullRoutes.post('/v1/sessions/:session/pull', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const { cursor } = await readJson(c, PullRequestSchema, SMALL_BODY_BYTES, 'pull');
  return c.json(await pullPage(c.var.store, c.var.account, session, cursor, LIMITS.maxPullBytes));
});

/**
 * One page of a session's batches after `sent`, in host then seq order: at most LIMITS.maxBatchesPerPull batches
 * and about `maxBytes` of bodies (the last batch may cross it; a page holds at least one batch when any is due).
 * 404 for a session with no heads. Also the per-session step of POST /v1/pulls.
 */
export async function pullPage(store: BlobStore, account: string, session: string, sent: Cursor, maxBytes: number): Promise<PullResponse> {
  // A Map, not the parsed object: host ids are user input, and `constructor` or `toString` must not read Object.prototype.
  const cursor = new Map(Object.entries(sent));
  const heads = await sessionHeads(store, account, session);
  if (heads.size === 0) throw notFoundSession(session);
  // Which (host, seq) to fetch, in order, capped by batch count; bytes are capped while reading.
  const wanted: { host: string; seq: number }[] = [];
  for (const host of [...heads.keys()].sort()) {
    const head = heads.get(host)!;
    // A cursor past the head (e.g. a client that talked to another server) just yields nothing for that host.
    for (let seq = (cursor.get(host) ?? 0) + 1; seq <= head && wanted.length < LIMITS.maxBatchesPerPull; seq++) wanted.push({ host, seq });
  }

  const batches: PulledBatch[] = [];
  const next = new Map(cursor);
  let bytes = 0;
  outer: for (let i = 0; i < wanted.length; i += PARALLEL_GETS) {
    const slice = wanted.slice(i, i + PARALLEL_GETS);
    const got = await Promise.all(slice.map((w) => readBatch(store, keys.batch(account, session, w.host, w.seq))));
    for (let j = 0; j < slice.length; j++) {
      const w = slice[j]!;
      const b = got[j];
      // Batches are written before their head, so a missing one below a head means lost data, not bad input.
      if (!b) throw new SessyncError('internal', `batch ${w.seq} of host ${w.host} in session ${session} is missing below its head ${heads.get(w.host)}`);
      if (isDamaged(b)) {
        // Served as damaged, never a 500: the client names it by host and seq and the cursor moves past it.
        batches.push({ envelope: { session, host: w.host, seq: w.seq, batchId: 'damaged', entryCount: 0, sha256: NO_SHA, encoding: 'jsonl' }, body: '', damaged: b.damaged });
        next.set(w.host, w.seq);
        continue;
      }
      batches.push(await asJsonBatch(b));
      next.set(w.host, w.seq);
      bytes += b.body.byteLength;
      if (bytes >= maxBytes) break outer;
    }
  }
  const more = [...heads].some(([host, head]) => head > (next.get(host) ?? 0));
  // fromEntries defines own properties, so every host id, whatever its name, is in the answer.
  return { batches, cursor: Object.fromEntries(next) as Cursor, more };
}
