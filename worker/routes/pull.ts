// POST /v1/sessions/:session/pull: the batches after a per-host cursor, in host then seq order, paginated; as JSON, or
// as binary frames (raw bodies) when the request's Accept names them.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { BlobStore } from '../store/blob-store.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { FRAMES_TYPE, type Frame } from '../../shared/batch-frames.js';
import { keys } from '../../shared/keys.js';
import { LIMITS, PullRequestSchema, type BatchEnvelope, type Cursor, type PulledBatch, type PullResponse, type SessionMetaResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { asJsonBatch, isDamaged, nameParam, notFoundSession, readBatch, readMeta, sessionHeads, type StoredBatchRecord, type StoredMeta } from '../session-data.js';
import { metaResponse } from '../meta-response.js';
import { findTombstone } from '../session-delete.js';
import { framesResponse } from '../frames-response.js';
import type { ItemError } from '../item-error.js';

export const pullRoutes = new Hono<AppEnv>();

/** The sha-256 a damaged batch is served with: no body hashes to it, so every client skips the batch. */
const NO_SHA = '0'.repeat(64);

/** Batches fetched at once: enough to hide store latency, few enough for Workers' subrequest limits. */
const PARALLEL_GETS = 8;

pullRoutes.post('/v1/sessions/:session/pull', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const { cursor, withMeta } = await readJson(c, PullRequestSchema, SMALL_BODY_BYTES, 'pull');
  const page = await pullPage(c.var.store, c.var.account, session, cursor, LIMITS.maxPullBytes, withMeta === true);
  return wantsFrames(c) ? framesResponse(c, pageFrames(page)) : c.json(await asJsonPage(page));
});

/** A page as read, before it is written out as JSON or as frames: stored records keep their body bytes. */
export interface ServedPage {
  session: string;
  batches: (StoredBatchRecord | ServedDamaged)[];
  cursor: Cursor;
  more: boolean;
  meta?: SessionMetaResponse;
}

/** A stored object that does not parse, as pulls serve it: host and seq, an empty body, a sha-256 nothing matches. */
interface ServedDamaged {
  envelope: BatchEnvelope;
  damaged: string;
}

function isServedDamaged(b: StoredBatchRecord | ServedDamaged): b is ServedDamaged {
  return 'damaged' in b;
}

/** The request asks for frames (Accept names FRAMES_TYPE); anything else gets JSON, as from a server before frames. */
export function wantsFrames(c: Context): boolean {
  const accept = c.req.header('accept');
  return accept !== undefined && accept.split(',').some((part) => part.split(';')[0]!.trim().toLowerCase() === FRAMES_TYPE);
}

/** The JSON answer of a page (clients before frames): a raw sealed body as base64, with the sha-256 of that text. */
export async function asJsonPage(p: ServedPage): Promise<PullResponse> {
  const batches: PulledBatch[] = [];
  for (const b of p.batches) batches.push(isServedDamaged(b) ? { envelope: b.envelope, body: '', damaged: b.damaged } : await asJsonBatch(b));
  const out: PullResponse = { batches, cursor: p.cursor, more: p.more };
  if (p.meta) out.meta = p.meta;
  return out;
}

/** A page as frames (see PullBatchFrameHeaderSchema in shared/wire.ts): its batches' bodies as stored, then its end frame. */
export function pageFrames(p: ServedPage): Frame[] {
  const frames: Frame[] = [];
  for (const b of p.batches) {
    if (isServedDamaged(b)) {
      frames.push({ header: { session: p.session, envelope: b.envelope, damaged: b.damaged }, body: EMPTY });
      continue;
    }
    // The record's own fields (such as `received`) first, so they can never stand in for the frame's.
    const header: Record<string, unknown> = { ...b.fields, session: p.session, envelope: b.envelope };
    if (b.base64) header.base64 = true;
    frames.push({ header, body: b.body });
  }
  frames.push({ header: { ok: true, session: p.session, cursor: p.cursor, more: p.more, ...(p.meta ? { meta: p.meta } : {}) }, body: EMPTY });
  return frames;
}

/** The end frame of a session whose page is an error (POST /v1/pulls answers it in that session's place). */
export function errorFrame(session: string, error: ItemError): Frame {
  return { header: { ...error, session }, body: EMPTY };
}

const EMPTY = new Uint8Array(0);

/** What a page needs before any batch is read: the heads, which (host, seq) are due, and the meta when asked for. */
export interface PagePlan {
  session: string;
  /** A Map, not the parsed object: host ids are user input, and `constructor` or `toString` must not read Object.prototype. */
  cursor: Map<string, number>;
  heads: Map<string, number>;
  /** Which (host, seq) to fetch, in order, capped by batch count; bytes are capped while reading. */
  wanted: { host: string; seq: number }[];
  meta: StoredMeta | null;
}

/**
 * One page of a session's batches after `sent`, in host then seq order: at most LIMITS.maxBatchesPerPull batches
 * and about `maxBytes` of bodies (the last batch may cross it; a page holds at least one batch when any is due).
 * 404 for a session with no heads. `withMeta`: the page carries the session's meta as GET /v1/sessions/:session
 * answers it, when it can be served (see pageMeta). POST /v1/pulls runs the two steps itself (planPage, readPage).
 */
export async function pullPage(store: BlobStore, account: string, session: string, sent: Cursor, maxBytes: number, withMeta = false): Promise<ServedPage> {
  return readPage(account, await planPage(store, account, session, sent, withMeta), maxBytes, new BatchReads(store));
}

export async function planPage(store: BlobStore, account: string, session: string, sent: Cursor, withMeta: boolean): Promise<PagePlan> {
  const cursor = new Map(Object.entries(sent));
  const [heads, meta] = await Promise.all([sessionHeads(store, account, session), withMeta ? pageMeta(store, account, session) : null]);
  if (heads.size === 0) throw notFoundSession(session);
  const wanted: { host: string; seq: number }[] = [];
  for (const host of [...heads.keys()].sort()) {
    const head = heads.get(host)!;
    // A cursor past the head (e.g. a client that talked to another server) just yields nothing for that host.
    for (let seq = (cursor.get(host) ?? 0) + 1; seq <= head && wanted.length < LIMITS.maxBatchesPerPull; seq++) wanted.push({ host, seq });
  }
  return { session, cursor, heads, wanted, meta };
}

type ReadResult = Awaited<ReturnType<typeof readBatch>>;

/**
 * The batch objects of one request, each read once: a read started ahead (the next sessions' first batches, while
 * this one's are read) is handed to the page that needs it, so a request of many small sessions does not wait
 * for one storage read after another.
 */
export class BatchReads {
  private readonly started = new Map<string, Promise<ReadResult>>();

  constructor(private readonly store: BlobStore) {}

  /** Starts reading `key` now. A read ahead that no page takes (the request's bytes ran out first) is dropped unread. */
  ahead(key: string): void {
    if (this.started.has(key)) return;
    const p = readBatch(this.store, key);
    // Its failure, if it is ever taken, reaches the page that takes it; untaken, it concerns no answer.
    p.catch(() => undefined);
    this.started.set(key, p);
  }

  take(key: string): Promise<ReadResult> {
    const p = this.started.get(key);
    if (!p) return readBatch(this.store, key);
    this.started.delete(key);
    return p;
  }
}

/** Reads a planned page within `maxBytes`, the reads in flight at once capped (Workers' subrequest limits). */
export async function readPage(account: string, plan: PagePlan, maxBytes: number, reads: BatchReads): Promise<ServedPage> {
  const { session, heads, wanted } = plan;
  const batches: ServedPage['batches'] = [];
  const next = new Map(plan.cursor);
  let bytes = 0;
  outer: for (let i = 0; i < wanted.length; i += PARALLEL_GETS) {
    const slice = wanted.slice(i, i + PARALLEL_GETS);
    const got = await Promise.all(slice.map((w) => reads.take(keys.batch(account, session, w.host, w.seq))));
    for (let j = 0; j < slice.length; j++) {
      const w = slice[j]!;
      const b = got[j];
      // Batches are written before their head, so a missing one below a head means lost data, not bad input.
      if (!b) throw new SessyncError('internal', `batch ${w.seq} of host ${w.host} in session ${session} is missing below its head ${heads.get(w.host)}`);
      if (isDamaged(b)) {
        // Served as damaged, never a 500: the client names it by host and seq and the cursor moves past it.
        batches.push({ envelope: { session, host: w.host, seq: w.seq, batchId: 'damaged', entryCount: 0, sha256: NO_SHA, encoding: 'jsonl' }, damaged: b.damaged });
        next.set(w.host, w.seq);
        continue;
      }
      batches.push(b);
      next.set(w.host, w.seq);
      bytes += b.body.byteLength;
      if (bytes >= maxBytes) break outer;
    }
  }
  const more = [...heads].some(([host, head]) => head > (next.get(host) ?? 0));
  // fromEntries defines own properties, so every host id, whatever its name, is in the answer.
  const page: ServedPage = { session, batches, cursor: Object.fromEntries(next) as Cursor, more };
  if (plan.meta) page.meta = metaResponse(session, plan.meta, heads);
  return page;
}

/**
 * The stored meta to serve with a page, or null when GET /v1/sessions/:session would answer an error instead: none
 * stored yet, the session deleted (410), or stored damaged (corrupt). The client then asks that route, whose answer
 * says why, so nothing is lost by leaving the meta out here; a store failure is thrown as for the page itself.
 */
async function pageMeta(store: BlobStore, account: string, session: string): Promise<StoredMeta | null> {
  const [meta, tomb] = await Promise.all([readMeta(store, account, session).catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e))), findTombstone(store, account, session)]);
  return tomb ? null : meta;
}
