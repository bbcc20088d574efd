// Push of one session: reads only the bytes after the pushed offset, sends them as numbered batches, resends a
// batch written down but not acknowledged (same seq, same batch id) so a kill -9 at any point cannot duplicate.
import { statSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { basename } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import type { SessionHeader } from '../../shared/entry.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { LIMITS, type AnySessionMetaInput, type PushBatchItem, type SessionMetaInput } from '../../shared/wire.js';
import { findTooDeepValue } from '../../shared/json-limits.js';
import { migrateFile } from '../store/migrate-file.js';
import { CURRENT_VERSION } from '../../shared/entry.js';
import { readHeader, readHeaderSync, type HeaderRead } from '../store/session-reader.js';
import { alignLeaf } from '../store/leaf-marker.js';
import { bodyFileOf, newSessionState, type PendingBatch, type SessionSyncState } from './session-sync-state.js';
import { sessionProjectKey } from './project-key.js';
import { readFirst, readSlice, tailHash, type FirstRead, type Slice } from './read-slice.js';
import { recycleRead } from './read-buffers.js';
import { leafAgrees } from './first-leaf.js';
import type { SyncContext } from './sync-context.js';
import { ownValue } from '../../shared/own-keys.js';
import { adoptStoredKey, sessionKey, type E2eKeys } from '../keys/sync-keys.js';
import { resealFrom, resealedBytes, sealedBytes, sealedMeta } from '../keys/seal-push.js';
import { killPoint } from './kill-point.js';

/** Sealed bodies up to this size ride inside the state file (which is rewritten per batch anyway). */
const INLINE_BODY_CHARS = 256 * 1024;

export interface PushTarget {
  session: string;
  path: string;
  name?: string;
  /** The server lost batches of ours (its head is below what we think it acknowledged): push all again from this seq. */
  resetTo?: number;
}

export interface PushResult {
  session: string;
  batches: number;
  entries: number;
  bytes: number;
  /** Lines not pushed because they are not valid entries (reported, never silently dropped). */
  /** Lines not pushed as they are: left out, or (`sent`) sent changed. */
  skipped: { offset: number; reason: string; sent?: true }[];
  migrated?: string;
}

function sha256Hex(s: string | Uint8Array): string {
  return createHash('sha256').update(s).digest('hex');
}

/**
 * A slice's body as the bytes sent, and their sha-256: the file's own bytes when they are one run (no join, no
 * decoding and encoding again, no copy), else the lines joined. Bytes that are not valid UTF-8 are decoded (as their
 * lines were parsed), so only then are the bytes sent those of the text; a run of lines the scan took is valid already.
 */
function bodyOf(slice: Slice): { bytes: Uint8Array; sha256: string } {
  const raw = slice.raw;
  const bytes = raw ? (slice.rawUtf8 || isUtf8(raw) ? raw : Buffer.from(raw.toString('utf8'), 'utf8')) : Buffer.from(slice.lines!.join('\n') + '\n', 'utf8');
  return { bytes, sha256: sha256Hex(bytes) };
}

/** A plaintext body as text (the lines a refusal reports, a body sealed after the fact). */
function textOf(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}

async function metaFor(target: PushTarget, known?: HeaderRead): Promise<SessionMetaInput> {
  const h = known ?? (await readHeader(target.path));
  if (!h.ok) throw new SessyncError('corrupt', `${target.path}: ${h.reason}`);
  const header: SessionHeader = h.header;
  if (findTooDeepValue(header, LIMITS.maxJsonDepth)) {
    // Sending it would only be refused (or, to an older server, be stored and break every pull of the session).
    throw new SessyncError('bad_input', `${target.path}: the session header nests JSON deeper than ${LIMITS.maxJsonDepth} levels, the server's limit; this session cannot be pushed`);
  }
  return { header, projectKey: await sessionProjectKey(header), ...(target.name ? { name: target.name.slice(0, 1000) } : {}) };
}

/** Finds this host's head for the session on the server (0 = none): used when our seq disagrees with it. */
async function serverHead(ctx: SyncContext, session: string): Promise<number> {
  try {
    return ownValue((await ctx.api.sessionMeta(session)).hosts, ctx.hostId) ?? 0;
  } catch (e) {
    if (isSessyncError(e, 'not_found')) return 0;
    throw e;
  }
}

/** Forgets what the state says was pushed: offset 0, meta unsent, the pending batch (if any) dropped, seqs from `nextSeq`. */
async function restart(ctx: SyncContext, st: SessionSyncState, nextSeq: number): Promise<SessionSyncState> {
  const out: SessionSyncState = { ...st, pushedOffset: 0, nextSeq, metaSent: false, pending: null, skipIds: [] };
  await ctx.state.save(out); // the state first: a crash before the body is gone leaves an orphan body, not a pending without one
  if (bodyFileOf(st.pending)) await ctx.state.dropPendingBody(st.session, st.pending.seq);
  return out;
}

/** Forgets the pending batch (its seq is reused by the next one): the server never took it. */
async function dropPending(ctx: SyncContext, st: SessionSyncState): Promise<SessionSyncState> {
  const p = st.pending;
  const out: SessionSyncState = { ...st, pending: null, nextSeq: p ? p.seq : st.nextSeq };
  await ctx.state.save(out);
  if (bodyFileOf(p)) await ctx.state.dropPendingBody(st.session, p.seq);
  return out;
}

/**
 * A turn to read and check a session's next batch, while a run pushes many (ctx.readTurn): held from the start and
 * again before each slice, given back before the batch is handed on. The first requests then fill from a few
 * sessions read one after another, not from all the run's sessions read a bit at a time.
 */
class ReadTurn {
  private held: (() => void) | undefined;
  constructor(private readonly take?: () => Promise<() => void>) {}
  async hold(): Promise<void> {
    if (!this.held && this.take) this.held = await this.take();
  }
  release(): void {
    this.held?.();
    this.held = undefined;
  }
}

export async function pushSession(ctx: SyncContext, target: PushTarget): Promise<PushResult> {
  const turn = new ReadTurn(ctx.readTurn);
  try {
    await turn.hold();
    return await pushHolding(ctx, target, turn);
  } finally {
    turn.release();
  }
}

async function pushHolding(ctx: SyncContext, target: PushTarget, turn: ReadTurn): Promise<PushResult> {
  const { session, path } = target;
  const result: PushResult = { session, batches: 0, entries: 0, bytes: 0, skipped: [] };
  let st: SessionSyncState = (await ctx.state.load(session)) ?? newSessionState(session, path);
  st.path = path;
  if (target.resetTo !== undefined) {
    ctx.note?.(`session ${session}: the server holds only ${target.resetTo - 1} of this machine's ${st.nextSeq - 1} batches (restored from a backup?); pushing the session again (merged by id there)`);
    st = await restart(ctx, st, target.resetTo);
  }
  // A first push reads the file once here: its header, its first batch and (when that is the whole file) its
  // entries for the leaf check. Else the header alone, read once for the format check, the leaf rule and the meta
  // (again only after a migration). Synchronously, as list reads headers: one of thousands of page-cached files.
  let first: FirstRead | undefined = st.pushedOffset === 0 && st.pending === null ? readFirst(path, new Set(st.skipIds)) : undefined;
  let header: HeaderRead | undefined = first?.header ?? readHeaderSync(path);
  if (st.pushedOffset === 0 && st.pending === null) {
    // An old-format file is brought to the current format first (the original kept as .bak), as pi does on open:
    // the ids it gets are deterministic, so two machines migrating copies of one file push the same entries.
    if (!header.ok) throw new SessyncError('corrupt', `${basename(path)}: ${header.reason}`);
    const m = (header.header.version ?? 1) < CURRENT_VERSION ? await migrateFile(path, ctx.env) : null;
    if (m) {
      header = undefined;
      first = undefined;
    }
    if (m?.changed) {
      result.migrated = `${path}: format ${m.fromVersion} -> ${m.toVersion} (original kept as ${m.backup})`;
      ctx.note?.(`migrated ${result.migrated}`);
    }
  }
  // pi (not sessync) may have written here: its last line is where the user is; a marker makes it sessync's leaf too.
  // A first push that read the whole file knows from it whether one is due; else (or when it is) the locked pass.
  if (!first || !leafAgrees(first)) {
    if ((await alignLeaf(path, 'local', header, ctx.env)) !== null) first = undefined; // the file grew by the marker: read again
  }
  if (st.pushedOffset > 0) {
    // The bytes before the offset, as hashed when it was reached: a file rewritten (replaced, edited, migrated by
    // another tool) shows up there, and the offset then means nothing any more. Push it all again; the server and
    // the other machines merge by id, so nothing is duplicated.
    const h = await tailHash(path, st.pushedOffset);
    if (h === null || (st.tail?.offset === st.pushedOffset && st.tail.hash !== h)) {
      ctx.note?.(`session ${session}: ${path} changed below the pushed offset (rewritten?); pushing it again from the start`);
      const { tail: _, ...rest } = st;
      st = { ...rest, pushedOffset: 0, skipIds: [] };
    }
  }
  const e2e: E2eKeys | null = (await ctx.e2e?.()) ?? null;
  if (e2e && st.pending && st.pending.encoding === undefined) {
    // Written down before the account became encrypted: the server now refuses it, so it is built again, sealed.
    st = await dropPending(ctx, st);
  }
  /** The plaintext project key, kept in the state whatever the server is sent (on an encrypted account, its HMAC). */
  let plainProjectKey: string | undefined;
  const wireMeta = async (): Promise<AnySessionMetaInput> => {
    const plain = await metaFor(target, header);
    header = undefined; // a later first batch (after a restart) reads the file as it is then
    plainProjectKey = plain.projectKey;
    return e2e ? sealedMeta(e2e, await sessionKey(ctx, e2e, session, { create: true, announcing: true, known: st.dataKey }), session, plain) : plain;
  };
  let meta: AnySessionMetaInput | undefined = st.metaSent ? undefined : await wireMeta();

  let rereadRefused = false;
  /** The body of the batch built in this run (its state does not hold a plaintext one): not read again to send it. */
  let built: { seq: number; batchId: string; body: string | Uint8Array; tail?: string } | undefined;
  for (let conflicts = 0; ; ) {
    if (st.pending) {
      const mine = built?.seq === st.pending.seq && built.batchId === st.pending.batchId ? built : undefined;
      const body = mine?.body ?? (st.pending.fromFile ? await bodyFromFile(ctx, e2e, path, st, st.pending) : await ctx.state.pendingBody(session, st.pending));
      if (body === null) {
        // State says pending but its body is gone (removed by hand, or the file changed below the batch's end):
        // rebuild from the file at the same seq (a server that took the first one answers a conflict, handled below).
        ctx.note?.(`session ${session}: pending batch ${st.pending.seq} lost its body; re-reading it from the file`);
        st = { ...st, nextSeq: st.pending.seq, pending: null };
        await ctx.state.save(st);
        continue;
      }
      const p: PendingBatch = st.pending;
      const req: PushBatchItem = {
        envelope: { session, host: ctx.hostId, seq: p.seq, batchId: p.batchId, entryCount: p.entryCount, sha256: p.sha256, encoding: p.encoding ?? 'jsonl' },
        body,
        ...(meta ? { meta } : {}),
      };
      let mismatch = false;
      try {
        turn.release();
        mismatch = (await (ctx.pushBatch ? ctx.pushBatch(req) : ctx.api.pushBatch(req))).metaMismatch === true;
        killPoint('batch-acknowledged');
      } catch (e) {
        if (isSessyncError(e, 'bad_input') && !e.retryable) {
          if (!rereadRefused) {
            // Written down by an older sessync (or a file changed since): build it again from the file with today's checks.
            rereadRefused = true;
            ctx.note?.(`session ${session}: batch ${p.seq} refused (${e.message}); building it again from the file`);
            st = await dropPending(ctx, st);
            continue;
          }
          // Refused again: its lines cannot be pushed as they are. Reported, then left behind, so later entries go.
          // (A sealed body is one opaque line here: the batch is reported as a whole.)
          const refused = p.encoding ? [`batch ${p.seq} (${p.entryCount} sealed entries)`] : textOf(body).split('\n').filter((l) => l.trim() !== '');
          for (const line of refused) {
            const reason = `refused by the server (${e.message}): ${line.slice(0, 120)}`;
            result.skipped.push({ offset: st.pushedOffset, reason });
            ctx.note?.(`session ${session}: line in bytes ${st.pushedOffset}-${p.endOffset} not pushed: ${reason}`);
          }
          st = await dropPending(ctx, { ...st, pushedOffset: Math.max(st.pushedOffset, p.endOffset) });
          continue;
        }
        if (!isSessyncError(e, 'conflict') || ++conflicts > 3) throw e;
        // The first batch met a meta not sealed yet (the account's conversion is unfinished): no seq helps; the message says what to run.
        const server = (e.details as { server?: { metaPlaintext?: unknown; metaMismatch?: unknown } } | undefined)?.server;
        if (server?.metaPlaintext === true) throw e;
        if (e2e && server?.metaMismatch === true) {
          // The session was made elsewhere under another data key (by an older sessync, with a random one, or before
          // a key rotation): the server stored nothing of this batch. It is sealed again, at the same seq, under the
          // stored key; the meta is the stored one.
          await adoptStoredKey(ctx, e2e, session);
          ctx.note?.(`session ${session}: the server holds it under another data key; batch ${p.seq} is sealed again under that key`);
          st = await dropPending(ctx, { ...st, metaSent: true, ...(plainProjectKey !== undefined ? { projectKey: plainProjectKey } : {}) });
          meta = undefined;
          continue;
        }
        // Our seq disagrees with the server (state restored from a backup, or a gap): continue after its head.
        const head = await serverHead(ctx, session);
        if (head < p.seq - 1) {
          // Batches the state calls acknowledged are gone from the server: the whole file goes again, with its meta.
          ctx.note?.(`session ${session}: seq ${p.seq} refused and the server holds only ${head} of our batches; pushing the session again`);
          st = await restart(ctx, st, head + 1);
          meta = await wireMeta();
          continue;
        }
        if (p.encoding) {
          // A sealed body is bound to its seq and batch id: it is sealed again from the file at the new seq.
          ctx.note?.(`session ${session}: seq ${p.seq} refused (${e.message}); sealing it again after the server's seq ${head}`);
          st = { ...st, nextSeq: head + 1, pending: null };
          await ctx.state.save(st);
          if (bodyFileOf(p)) await ctx.state.dropPendingBody(session, p.seq);
          continue;
        }
        ctx.note?.(`session ${session}: seq ${p.seq} refused (${e.message}); continuing after the server's seq ${head}`);
        if (bodyFileOf(p)) {
          await ctx.state.writePendingBody(session, head + 1, body);
          await ctx.state.dropPendingBody(session, p.seq);
        }
        st = { ...st, nextSeq: head + 1, pending: { ...p, seq: head + 1, batchId: randomUUID() } };
        if (mine) built = { ...mine, seq: head + 1, batchId: st.pending!.batchId };
        await ctx.state.save(st);
        continue;
      }
      if (mismatch && e2e) {
        // The stored meta wraps another key (a server that stores first and compares after, or one that raced this
        // push): the stored meta stays, and the same entries go again in the next seq, under the stored key. (Pull
        // opens this batch too: it is sealed under the key derived for the session, see open-pull.)
        await adoptStoredKey(ctx, e2e, session);
        ctx.note?.(`session ${session}: another machine created it under another data key; batch ${p.seq} is sent again under that key`);
        st = { ...st, nextSeq: p.seq + 1, pending: null, metaSent: true };
        await ctx.state.save(st);
        if (bodyFileOf(p)) await ctx.state.dropPendingBody(session, p.seq);
        meta = undefined;
        continue;
      }
      st = { ...st, pushedOffset: Math.max(st.pushedOffset, p.endOffset), nextSeq: p.seq + 1, pending: null, metaSent: true };
      if (meta && plainProjectKey !== undefined) st.projectKey = plainProjectKey;
      if (e2e && p.encoding) await keepDataKey(e2e, st);
      // The tail hash of the new offset, from the bytes read to build the batch: no read and no save more.
      if (mine?.tail !== undefined && st.pushedOffset === p.endOffset) st.tail = { offset: p.endOffset, hash: mine.tail };
      built = undefined;
      await ctx.state.save(st);
      if (bodyFileOf(p)) await ctx.state.dropPendingBody(session, p.seq);
      meta = undefined;
      result.batches++;
      result.entries += p.entryCount;
      const bytes = Buffer.byteLength(body);
      // Acknowledged, so the server holds these bytes: the file's bytes they are (plaintext) are read into again by a
      // later batch, unless the request may have handed them on uncopied (a fetch into an app in this process).
      if (typeof body !== 'string' && !p.encoding && ctx.api.bodiesCopied) recycleRead(body);
      result.bytes += bytes;
      ctx.onProgress?.({ entries: p.entryCount, bytes });
      continue;
    }
    // The first push's first slice was read with the header, with the size then: not read again (once; a restart
    // reads the file anew, and so does the look for more after it).
    const ahead = first && st.pushedOffset === 0 ? first : undefined;
    first = undefined;
    const size = ahead?.size ?? statSync(path).size;
    if (size <= st.pushedOffset) {
      if (st.skipIds.length > 0 && size === st.pushedOffset) {
        st = { ...st, skipIds: [] };
        await ctx.state.save(st);
      }
      break;
    }
    await turn.hold();
    const slice = ahead?.slice ?? (await readSlice(path, st.pushedOffset, size, new Set(st.skipIds)));
    for (const s of slice.skipped) ctx.note?.(`session ${session}: line at byte ${s.offset} ${s.sent ? 'pushed changed' : 'not pushed'}: ${s.reason}`);
    result.skipped.push(...slice.skipped);
    if (slice.end === st.pushedOffset) break; // only an unfinished line: the next push takes it
    if (slice.count === 0) {
      const done = slice.end >= size;
      if (done && !st.metaSent && st.nextSeq === 1 && st.pending === null) {
        // Only a header so far (`sessync new` without --model): an empty first batch carries the meta, so the
        // session reaches the other machines now, not only after its first entry.
        st = { ...st, pending: (await sealIf(ctx, e2e, { seq: 1, batchId: randomUUID(), entryCount: 0, sha256: sha256Hex(''), endOffset: slice.end }, st, '')).pending };
        await ctx.state.save(st);
        continue;
      }
      // Only pulled, blank or invalid lines: nothing to send, move on.
      st = { ...st, pushedOffset: slice.end, ...(done ? { skipIds: [] } : {}), ...(slice.tailHash !== undefined ? { tail: { offset: slice.end, hash: slice.tailHash } } : {}) };
      await ctx.state.save(st);
      continue;
    }
    // A new session's first batch carries its meta and its entries together, sealed under the key derived for its id:
    // every machine that makes the same id derives the same key, so no answer is awaited first. A session the server
    // holds under another key (made by an older sessync, or before a rotation) is refused whole, before any write:
    // the batch is then sealed again under the stored key (the metaMismatch conflict above).
    const plain = bodyOf(slice);
    const made = await sealIf(ctx, e2e, { seq: st.nextSeq, batchId: randomUUID(), entryCount: slice.count, sha256: plain.sha256, endOffset: slice.end }, st, plain.bytes);
    const pending = made.pending;
    built = { seq: pending.seq, batchId: pending.batchId, body: made.body, ...(slice.tailHash !== undefined ? { tail: slice.tailHash } : {}) };
    if (!pending.encoding) {
      // Plaintext is the file's own lines: a resend after a crash reads them again (checked against the hash),
      // so the state stays small and no body is written twice.
      delete pending.body;
      pending.fromFile = true;
    }
    st = { ...st, pending };
    await ctx.state.save(st);
  }
  if (st.pushedOffset > 0 && st.tail?.offset !== st.pushedOffset) {
    const hash = await tailHash(path, st.pushedOffset);
    if (hash !== null) {
      st = { ...st, tail: { offset: st.pushedOffset, hash } };
      await ctx.state.save(st);
    }
  }
  return result;
}

/**
 * The pending batch with its body: sealed once here on an encrypted account (a resend after a crash sends these
 * same bytes, so the server sees a retry, not another batch at that seq), else the JSONL as it is. Entries sealed
 * from the file's bytes are not stored either: the pending batch keeps their nonce and plaintext hash (`p.sha256`,
 * as the caller hashed them), and a resend seals the same lines again into the same bytes (no body file, no fsync).
 */
async function sealIf(ctx: SyncContext, e2e: E2eKeys | null, p: PendingBatch, st: SessionSyncState, plain: string | Uint8Array): Promise<{ pending: PendingBatch; body: string | Uint8Array }> {
  // A caller that hashed the bytes passes the hash; bytes (the file's) are not kept in the state, text may be.
  if (!e2e) return { pending: { ...p, sha256: p.sha256 || sha256Hex(plain), ...(typeof plain === 'string' ? { body: plain } : {}) }, body: plain };
  const session = st.session;
  const key = await sessionKey(ctx, e2e, session, { create: true, known: st.dataKey });
  // Raw bytes from here to the server's record: nothing is base64'd (only a small inline body, in the JSON state).
  // The file's bytes are sealed as they are: no text is made of them to be encoded again.
  const sealed = await sealedBytes(e2e, key, { session, host: ctx.hostId, seq: p.seq, batchId: p.batchId, entryCount: p.entryCount }, plain);
  const kept: PendingBatch = { ...p, sha256: sealed.sha256, encoding: 'aes-256-gcm', raw: true };
  if (typeof plain !== 'string' && p.entryCount > 0) return { pending: { ...kept, fromFile: true, ...resealFrom(sealed.body, p.sha256 || sha256Hex(plain)) }, body: sealed.body };
  return { pending: await keepSealed(ctx, session, kept, sealed.body), body: sealed.body };
}

/**
 * Writes down in the state (saved with the acknowledgement, so no write more) the data key the session's batches
 * were just acknowledged under: the server's meta wraps it, so a later push needs no GET of the meta to find it.
 */
async function keepDataKey(e2e: E2eKeys, st: SessionSyncState): Promise<void> {
  const k = await e2e.sessionKeys.get(st.session);
  if (k && st.dataKey?.wrappedKey !== k.wrappedKey) st.dataKey = { keyId: k.keyId, wrappedKey: k.wrappedKey };
}

/**
 * The sealed pending batch with a small body inline (its raw bytes as base64: the state is JSON), or a large one
 * written to pending/ first: the state naming it is saved after, so a crash in between leaves an orphan body, never
 * a pending without one.
 */
async function keepSealed(ctx: SyncContext, session: string, p: PendingBatch, body: Uint8Array): Promise<PendingBatch> {
  if (Math.ceil(body.byteLength / 3) * 4 > INLINE_BODY_CHARS) {
    await ctx.state.writePendingBody(session, p.seq, body);
    return p;
  }
  return { ...p, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64') };
}

/**
 * A pending batch's body, read again from the file: the lines from the pushed offset to its end, with today's
 * checks, and sealed again when it was sealed. null when they are not the batch written down (the file changed
 * below its end, or the session's key is another by now).
 */
async function bodyFromFile(ctx: SyncContext, e2e: E2eKeys | null, path: string, st: SessionSyncState, p: PendingBatch): Promise<Uint8Array | null> {
  let slice: Slice;
  try {
    slice = await readSlice(path, st.pushedOffset, p.endOffset, new Set(st.skipIds));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  if (slice.end !== p.endOffset || slice.count !== p.entryCount || p.entryCount === 0) return null;
  const body = bodyOf(slice);
  if (p.encoding) {
    if (!e2e || p.nonce === undefined || p.plainSha256 === undefined) return null;
    const key = await sessionKey(ctx, e2e, st.session, { create: true, known: st.dataKey });
    const b = { session: st.session, host: ctx.hostId, seq: p.seq, batchId: p.batchId, entryCount: p.entryCount };
    return resealedBytes(e2e, key, b, body.bytes, { nonce: p.nonce, plainSha256: p.plainSha256 }, p.sha256);
  }
  return body.sha256 === p.sha256 ? body.bytes : null;
}

/** For callers that only need to know whether a push has anything to do (no request, no read of the file). */
export async function needsPush(ctx: SyncContext, session: string, size: number): Promise<boolean> {
  const st = await ctx.state.load(session);
  return !st || st.pending !== null || size > st.pushedOffset;
}

