// The metas of many remote sessions in shared POST /v1/pulls requests (a page of each, its cursor past every head), not a GET each.
import { isSessyncError } from '../../shared/errors.js';
import { LIMITS, type Cursor, type Head, type SessionMetaResponse } from '../../shared/wire.js';
import type { PullItem } from '../api-client.js';
import type { SyncContext } from './sync-context.js';

/** Past any seq a server stores (BatchEnvelopeSchema's highest): the page brings the meta and no batch. */
const PAST_EVERY_HEAD = 999_999_999_999;
/** A request's body stays under the server's small-body limit (1 MiB), whatever the sessions' host counts. */
const REQUEST_BYTES = 1024 * 1024 - 16 * 1024;
/** Requests in flight at once: latency hidden, the server's parallel reads per request (16) not multiplied much. */
const IN_FLIGHT = 2;

/**
 * Metas of `sessions` as the server answers them with a page, about sessions / LIMITS.maxSessionsPerPull requests.
 * A session missing from the answer (no head in `heads`, an item error, no meta served, or a server that takes one
 * session per request: Workers 413, older ones 404) is for the caller to ask alone, as before, so its error (not
 * found, a damaged meta) is reported the one way it always was.
 */
export async function fetchMetas(ctx: SyncContext, sessions: readonly string[], heads: readonly Head[]): Promise<Map<string, SessionMetaResponse>> {
  const out = new Map<string, SessionMetaResponse>();
  if (sessions.length < 2) return out; // one session: its GET is as cheap
  const cursors = new Map<string, Cursor>();
  const wanted = new Set(sessions);
  for (const h of heads) {
    if (!wanted.has(h.session)) continue;
    let c = cursors.get(h.session);
    // Null prototype: host ids come from the server, and one called `constructor` must be a key like any other.
    if (!c) cursors.set(h.session, (c = Object.create(null) as Cursor));
    c[h.host] = PAST_EVERY_HEAD;
  }
  const groups = chunk([...cursors].map(([session, cursor]): PullItem => ({ session, cursor, withMeta: true })));
  let next = 0;
  let single = false;
  /** One group failed: the run reports it, so the other worker sends no more (it would go on after the lock is let go). */
  let failed = false;
  const worker = async () => {
    while (!single && !failed && next < groups.length) {
      const group = groups[next++]!;
      let results;
      try {
        results = (await ctx.api.pullPages(group)).results;
      } catch (e) {
        // A server that takes one session per request (413), or knows no POST /v1/pulls (404): each asked alone.
        if (isSessyncError(e, 'too_large') || isSessyncError(e, 'not_found')) {
          single = true;
          return;
        }
        failed = true;
        throw e;
      }
      for (const r of results) {
        // Only a session asked for, and only its own meta: a server that answers another's is not believed.
        if (r.ok && r.meta?.session === r.session && cursors.has(r.session)) out.set(r.session, r.meta);
      }
      // A server from before `withMeta` refuses the flag (the client then asks without it): pages bring no metas, and
      // asking it in groups only adds requests. A group with no meta served is not that sign: a current server leaves
      // out a meta that is missing or damaged (legacy sessions, asked alone then, as always), and the next group may
      // have every one.
      if (ctx.api.refusesMeta) single = true;
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, groups.length) }, worker));
  return out;
}

/** Items in requests of at most LIMITS.maxSessionsPerPull sessions and REQUEST_BYTES of JSON. */
function chunk(items: readonly PullItem[]): PullItem[][] {
  const out: PullItem[][] = [];
  let cur: PullItem[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (cur.length > 0 && (cur.length >= LIMITS.maxSessionsPerPull || bytes + size > REQUEST_BYTES)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(item);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}
