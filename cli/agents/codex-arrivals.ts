// When the server received a Codex session's lines: asked only when continuations of one line need ordering (the fork rule).
import { createHash } from 'node:crypto';
import type { Arrival } from '../../shared/codex-fork.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { findTooDeepText } from '../../shared/json-limits.js';
import { LIMITS, type Cursor } from '../../shared/wire.js';
import { openPulled } from '../keys/open-pull.js';
import type { SyncContext } from '../sync/sync-context.js';
import type { CodexState } from './codex-state.js';

/** Whether `a` was on the server before `b`: a batch with no `received` (an older server's) before any with one. */
function before(a: Arrival, b: Arrival): boolean {
  if (a.received === undefined || b.received === undefined) return a.received === undefined && b.received !== undefined;
  return a.received < b.received || (a.received === b.received && a.host < b.host);
}

/** A body as pulled: text from a JSON answer, bytes from a frames one. */
type Body = string | Uint8Array;

function sha256Of(body: Body): string {
  return (typeof body === 'string' ? createHash('sha256').update(body, 'utf8') : createHash('sha256').update(body)).digest('hex');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body's text; null for bytes that are not UTF-8 (a damaged batch: no line of it is in any line of work). */
function bodyText(body: Body): string | null {
  if (typeof body === 'string') return body;
  try {
    return utf8.decode(body);
  } catch {
    return null;
  }
}

function idOf(line: string): string | null {
  if (line.trim() === '' || findTooDeepText(line, LIMITS.maxJsonDepth)) return null;
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null; // a line the pull reports as not merged; it has no place in any line of work either
  }
}

/**
 * Every line of the session the server holds -> the first batch it came in. Reads every batch of the session, this
 * machine's own included: the order of its own lines is the server's word too, not what this machine remembers.
 * A session the server does not have yields an empty map (none of its lines reached it).
 */
export async function serverArrivals(ctx: SyncContext, session: string): Promise<Map<string, Arrival>> {
  const out = new Map<string, Arrival>();
  const e2e = (await ctx.e2e?.()) ?? null;
  let cursor: Cursor = {};
  for (;;) {
    let res;
    try {
      res = await ctx.api.pull(session, cursor);
    } catch (e) {
      if (isSessyncError(e, 'not_found')) return out;
      throw e;
    }
    const opened = e2e ? await openPulled(ctx, e2e, session, res.batches) : res.batches;
    opened.forEach((b, i) => {
      if (b.damaged !== undefined || b.envelope.encoding !== 'jsonl') return;
      // An opened sealed batch was checked by its tag; a plaintext one whose body is not its sha-256 is passed, as by pull.
      const text = bodyText(b.body);
      if (text === null || (!e2e && sha256Of(b.body) !== b.envelope.sha256)) return;
      const received = res.batches[i]!.received;
      const at: Arrival = received !== undefined ? { host: b.envelope.host, received } : { host: b.envelope.host };
      for (const line of text.split('\n')) {
        const id = idOf(line);
        if (id === null) continue;
        const was = out.get(id);
        if (!was || before(at, was)) out.set(id, at);
      }
    });
    cursor = res.cursor;
    if (!res.more) return out;
  }
}

/**
 * The arrivals of `wanted` lines of `session`: from the state when every one is known there (an arrival never changes),
 * else asked of the server once and the ones it holds kept. A line the server does not hold stays out: not there yet.
 */
export async function arrivalsFor(state: CodexState, session: string, wanted: readonly string[], ask: (session: string) => Promise<Map<string, Arrival>>): Promise<Map<string, Arrival>> {
  const kept = state.arrivals[session] ?? {};
  if (!wanted.every((id) => Object.hasOwn(kept, id))) {
    const got = await ask(session).catch((e: unknown) => {
      const why = (e as Error).message;
      throw new SessyncError(isSessyncError(e) ? e.code : 'internal', `the server could not say which continuation of session ${session} it received first (${why}); no fork is made until it can, the next sync asks again`, {
        retryable: true,
        cause: e,
      });
    });
    for (const id of wanted) {
      const a = got.get(id);
      if (a) kept[id] = a;
    }
    state.arrivals[session] = kept;
  }
  return new Map(wanted.flatMap((id) => (Object.hasOwn(kept, id) ? [[id, kept[id]!] as const] : [])));
}
