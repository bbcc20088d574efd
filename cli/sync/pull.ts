// Pull of one session: batches after the per-host cursor, merged by id into the local file (appended, never
// rewritten); the cursor is saved only after the new entries are fsynced, so a kill -9 re-pulls, never skips.
import { open, readFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { checkEntry, checkHeader, type SessionEntry, type SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { findTooDeepText, findTooDeepValue } from '../../shared/json-limits.js';
import { toJsonText } from '../../shared/json-stringify.js';
import { canonicalJson, exactTexts, mergeEntries, type IncomingEntry, type MergeConflict } from '../../shared/merge.js';
import { ownValue, toNullRecord } from '../../shared/own-keys.js';
import { LIMITS, type Cursor, type SessionMetaResponse } from '../../shared/wire.js';
import { createSessionFile, appendEntries } from '../store/session-writer.js';
import { ensureCurrent } from '../store/migrate-file.js';
import { readSession } from '../store/session-reader.js';
import { alignLeaf } from '../store/leaf-marker.js';
import { withLocalParent } from '../store/lineage.js';
import { piLayout } from '../store/pi-folders.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { newSessionState, rememberBadBatches, type BatchProblem, type SessionSyncState } from './sync-state.js';
import type { SyncContext } from './sync-context.js';
import { PRIVATE_FILE, mkdirPrivate } from '../store/private-fs.js';
import { openPulled, type OpenedBatch } from '../keys/open-pull.js';
import { readMeta } from '../keys/sync-keys.js';
import { killPoint } from './kill-point.js';

/** The highest seq there can be (BatchEnvelopeSchema): tells the server not to send this host's own batches back. */
const OWN_DONE = 999_999_999_999;

export interface PullOptions {
  /** The local file, when the session exists here. */
  path?: string;
  /** For a session new to this machine: the local project folder to file it under (its header cwd). */
  placeFor?: (meta: SessionMetaResponse) => Promise<string>;
  /**
   * Hosts the server's heads name for this session: each gets an explicit cursor entry (0 when none yet), so a
   * server that reads `cursor[host]` without an own-key check still serves a host called `constructor`.
   */
  hosts?: Iterable<string>;
}

export interface PullResult {
  session: string;
  path: string;
  batches: number;
  appended: number;
  duplicates: number;
  conflicts: number;
  /** The file was created by this pull. */
  created: boolean;
  /** Remote lines that are not valid entries (reported, not merged). */
  skipped: number;
  /** Stored batches, or lines of them, that could not be merged: named by host and seq, the cursor moved past them. */
  problems: BatchProblem[];
  /** Id of the checkout marker appended so that pi's leaf (the last line) is sessync's leaf again; it needs a push. */
  marker?: string;
}

/**
 * The entries of one stored batch. What an older server may have stored damaged is skipped and named, never
 * fatal: a body that does not match its sha-256 (the whole batch), and lines that are not JSON, nest deeper
 * than LIMITS.maxJsonDepth, or are not entries (each line alone). Only an encoding this client cannot read
 * stops the session's pull: a newer sessync can, so its cursor must not move past it.
 */
function decode(session: string, b: OpenedBatch, note: SyncContext['note']): Decoded {
  const { host, seq } = b.envelope;
  if (b.damaged !== undefined) {
    // The server could not read the object it stores (an older server wrote it): it names host and seq only.
    const reason = `the server cannot read it (stored damaged: ${b.damaged})`;
    note?.(`session ${session}: batch ${seq} of host ${host} skipped: ${reason}`);
    return { entries: [], skipped: 0, problems: [{ host, seq, reason: reason.slice(0, 300) }] };
  }
  if (b.envelope.encoding !== 'jsonl') {
    throw new SessyncError('unsupported_version', `session ${session}: batch ${seq} of host ${host} is ${b.envelope.encoding}-encrypted; this sessync cannot read it`);
  }
  // An opened sealed batch was checked by its GCM tag, stronger than the sha-256 (which is of its ciphertext).
  // The sha-256 is of the body as it came: a string's UTF-8 (JSON), or the frame's bytes.
  const matches = b.authenticated === true || sha256Of(b.body) === b.envelope.sha256;
  const text = matches ? bodyText(b.body) : null;
  if (text === null) {
    const reason = `its body ${matches ? 'is not UTF-8' : 'does not match its sha-256'} (stored damaged); none of its ${b.envelope.entryCount} entries merged`;
    note?.(`session ${session}: batch ${seq} of host ${host} skipped: ${reason}`);
    return { entries: [], skipped: 0, problems: [{ host, seq, reason }] };
  }
  const entries: IncomingEntry[] = [];
  const problems: BatchProblem[] = [];
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (line.trim() === '') continue;
    let v: unknown;
    let why: string | null;
    // Depth first, on the text: merging, writing and redacting a value this deep is what the limit spares.
    if (findTooDeepText(line, LIMITS.maxJsonDepth)) why = `it nests JSON deeper than ${LIMITS.maxJsonDepth} levels (the limit)`;
    else {
      try {
        v = JSON.parse(line);
        why = checkEntry(v);
      } catch (e) {
        why = `not JSON (${(e as Error).message})`;
      }
    }
    if (why) {
      problems.push({ host, seq, line: lineNo, reason: why.slice(0, 300) });
      note?.(`session ${session}: line ${lineNo} of batch ${seq} from host ${host} not merged: ${why}`);
      continue;
    }
    entries.push({ entry: v as SessionEntry, host, text: line });
  }
  // Every line an entry, each ended by its newline: the body's bytes are those lines exactly as a file holds them.
  const whole = typeof b.body !== 'string' && entries.length === lineNo - 1 && text.endsWith('\n') ? b.body : undefined;
  return { entries, skipped: problems.length, problems, ...(whole ? { whole } : {}) };
}

interface Decoded {
  entries: IncomingEntry[];
  skipped: number;
  problems: BatchProblem[];
  /** The body's bytes, when they are exactly its entries' lines (each with its newline) and nothing else. */
  whole?: Uint8Array;
}

/**
 * The lines of a new file as the batches' bytes, when the merge keeps every incoming entry in arrival order (no
 * id twice, parents already first): writing them spares building the text again. Else undefined (serialised).
 */
function wholeBodies(decoded: readonly Decoded[], incoming: readonly IncomingEntry[], toAppend: readonly SessionEntry[]): Uint8Array[] | undefined {
  if (toAppend.length !== incoming.length || toAppend.some((e, i) => e !== incoming[i]!.entry)) return undefined;
  const out: Uint8Array[] = [];
  for (const d of decoded) {
    if (d.entries.length === 0) continue;
    if (!d.whole) return undefined;
    out.push(d.whole);
  }
  return out;
}

function sha256Of(body: string | Uint8Array): string {
  return (typeof body === 'string' ? createHash('sha256').update(body, 'utf8') : createHash('sha256').update(body)).digest('hex');
}

// ignoreBOM: a leading BOM stays in the text (and fails its line), as it would in a JSON string; the bytes are written as they are.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A body as text; null for bytes that are not UTF-8 (a server validates JSONL as UTF-8 when it is pushed). */
function bodyText(body: string | Uint8Array): string | null {
  if (typeof body === 'string') return body;
  try {
    return utf8.decode(body);
  } catch {
    return null;
  }
}

/** Same id, different content: the remote version goes to <home>/sync/conflicts/<session>.jsonl, once. */
async function setAside(ctx: SyncContext, session: string, conflicts: MergeConflict[]): Promise<number> {
  if (conflicts.length === 0) return 0;
  const p = ctx.state.conflictsPath(session);
  const have = new Set<string>();
  try {
    for (const line of (await readFile(p, 'utf8')).split('\n')) {
      if (!line) continue;
      try {
        have.add(canonicalJson((JSON.parse(line) as { entry: unknown }).entry));
      } catch {
        ctx.note?.(`${p}: an unreadable line is kept as it is`);
      }
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  let text = '';
  for (const c of conflicts) {
    const canon = canonicalJson(c.aside);
    if (have.has(canon)) continue;
    have.add(canon);
    text += toJsonText({ id: c.id, host: c.host ?? null, detected: new Date().toISOString(), kept: c.kept, entry: c.aside }) + '\n';
  }
  if (text) {
    await mkdirPrivate(dirname(p));
    const fh = await open(p, 'a', PRIVATE_FILE);
    try {
      await fh.write(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
  ctx.note?.(`session ${session}: ${conflicts.length} entr${conflicts.length === 1 ? 'y has' : 'ies have'} the same id as a local one but different content; the local version stays in the log, the other is kept in ${p}`);
  return conflicts.length;
}

export async function pullSession(ctx: SyncContext, session: string, opts: PullOptions = {}): Promise<PullResult> {
  let st: SessionSyncState | null = await ctx.state.load(session);
  let path = opts.path ?? st?.path;
  if (path && !(await stat(path).then(() => true, () => false))) path = undefined;
  const creating = path === undefined;
  const result: PullResult = { session, path: path ?? '', batches: 0, appended: 0, duplicates: 0, conflicts: 0, created: false, skipped: 0, problems: [] };
  // Null prototype: host ids are user input, and a host called `constructor` must read as a host, not Object's function.
  const cursor: Cursor = toNullRecord(st?.cursor);
  for (const h of opts.hosts ?? []) if (!Object.hasOwn(cursor, h)) cursor[h] = 0;
  // A file this machine holds has all of its own batches; a session being created here takes them too.
  if (!creating) cursor[ctx.hostId] = OWN_DONE;
  else delete cursor[ctx.hostId];

  let local: Map<string, SessionEntry> | null = null;
  /** Highest seq of this host's own batches seen while creating the file: over every page, not only the first. */
  let ownSeq = 0;
  /** Known that the file's last entry is its newest tip (as created here, nothing appended since): no marker needed. */
  let leafAgrees = false;
  const e2e = (await ctx.e2e?.()) ?? null;
  for (;;) {
    // A session new here asks for its meta with the page (header, cwd, sealed key): one request, not two.
    const ask = path === undefined ? { withMeta: true } : {};
    const res = await (ctx.pull ? ctx.pull(session, cursor, ask) : ctx.api.pullPage(session, cursor, ask));
    // Only this session's: a server that answers another's is not believed (the meta is then asked for alone).
    const served = res.meta?.session === session ? res.meta : undefined;
    // Encrypted: every batch of the page authenticated before any of it is merged (a failure throws, nothing written).
    const batches = e2e ? await openPulled(ctx, e2e, session, res.batches, served) : res.batches;
    const incoming: IncomingEntry[] = [];
    const problems: BatchProblem[] = [];
    const decoded: Decoded[] = [];
    for (const b of batches) {
      const d = decode(session, b, ctx.note);
      decoded.push(d);
      incoming.push(...d.entries);
      result.skipped += d.skipped;
      problems.push(...d.problems);
    }
    result.problems.push(...problems);
    result.batches += res.batches.length;
    let bytes = 0;
    for (const b of res.batches) bytes += typeof b.body === 'string' ? b.body.length : b.body.byteLength;

    if (path === undefined) {
      if (incoming.length === 0 && problems.length > 0 && !res.more) {
        // Nothing to create a file from; no cursor is saved, so the next run reports it again.
        throw new SessyncError('corrupt', `session ${session}: every batch the server holds is damaged (${describeProblems(problems)}); no local file created`, { details: { problems: problems.slice(0, 100) } });
      }
      // A session announced by an empty batch (only a header so far) is created here with its header alone.
      if (res.batches.length === 0 && !res.more) {
        throw new SessyncError('not_found', `session ${session} has no entries on the server yet`);
      }
      const meta = await readMeta(ctx, session, served); // a sealed meta opened, or refused
      if (!meta.header) throw new SessyncError('corrupt', `session ${session}: its meta is sealed (end-to-end encrypted) and this client cannot open it; no local file created`);
      // The header becomes the new file's first line: checked like any line a server sends.
      if (findTooDeepValue(meta.header, LIMITS.maxJsonDepth)) {
        throw new SessyncError('corrupt', `session ${session}: the server's header nests JSON deeper than ${LIMITS.maxJsonDepth} levels; no local file created`);
      }
      const cwd = opts.placeFor ? await opts.placeFor(meta) : String(meta.header.cwd ?? meta.cwd ?? '');
      if (!cwd) throw new SessyncError('corrupt', `session ${session}: the server's header has no cwd`);
      const headerWhy = checkHeader({ ...meta.header, cwd });
      if (headerWhy) throw new SessyncError('corrupt', `session ${session}: the server's header is not a session header (${headerWhy}); no local file created`);
      // Local facts: the cwd here, and the parent's file here (pi's picker nests a fork under it by path).
      const header = await withLocalParent(ctx.sessionsRoot, { ...meta.header, cwd } as SessionHeader, piLayout(ctx.env));
      const m = mergeEntries(new Map(), incoming);
      path = join(ctx.flat ? ctx.sessionsRoot : projectDir(ctx.sessionsRoot, cwd), sessionFileName(String(header.timestamp), session));
      const bodies = wholeBodies(decoded, incoming, m.toAppend);
      const tail = await createSessionFile(path, header, m.toAppend, bodies ? { lines: bodies } : exactTexts(incoming));
      // Written parents-first with the newest tip last: pi's leaf and sessync's agree unless the tip rule differs.
      leafAgrees = tail.lastId === tail.leafId;
      result.path = path;
      result.created = true;
      result.appended += m.toAppend.length;
      result.duplicates += m.duplicates;
      result.conflicts += await setAside(ctx, session, m.conflicts);
      local = new Map(m.toAppend.map((e) => [e.id, e]));
      st = { ...(st ?? newSessionState(session, path)), path, pushedOffset: (await stat(path)).size, skipIds: [], metaSent: true };
    } else {
      if (st === null) st = newSessionState(session, path);
      if (incoming.length > 0) {
        if (local === null) {
          // Appending needs the current format; pi migrates the same way on open.
          const mig = await ensureCurrent(path);
          if (mig?.changed) ctx.note?.(`migrated ${path}: format ${mig.fromVersion} -> ${mig.toVersion} (original kept as ${mig.backup})`);
          local = new Map((await readSession(path)).entries.map((e) => [e.id, e]));
        }
        const m = mergeEntries(local, incoming);
        if (m.toAppend.length > 0) {
          await appendEntries(path, m.toAppend, { texts: exactTexts(incoming) }); // fsynced before it returns
          leafAgrees = false;
        }
        for (const e of m.toAppend) local.set(e.id, e);
        result.appended += m.toAppend.length;
        result.duplicates += m.duplicates;
        result.conflicts += await setAside(ctx, session, m.conflicts);
        // Entries the server has need no push back; ids already pushed are before the offset and never read.
        // A conflicting id is not skipped: the local version must still reach the server (and the other machines).
        const clashing = new Set(m.conflicts.map((c) => c.id));
        const skip = new Set(st.skipIds);
        for (const x of incoming) if (!clashing.has(x.entry.id)) skip.add(x.entry.id);
        st = { ...st, skipIds: [...skip] };
      }
    }
    if (creating) ownSeq = Math.max(ownSeq, ownValue(res.cursor, ctx.hostId) ?? 0);
    const saved: Cursor = toNullRecord(res.cursor);
    delete saved[ctx.hostId];
    // Our own batches came with the file: the next one we push follows the highest of them. Damaged batches
    // are passed (the good ones after them are merged) and remembered in the state, reported once here.
    st = { ...st, path, cursor: saved, nextSeq: Math.max(st.nextSeq, ownSeq + 1), ...rememberBadBatches(st, problems) };
    killPoint('pull-merged'); // the page's entries are durable in the file, its cursor not yet saved
    await ctx.state.save(st); // after the fsync of the entries: a crash before this line only re-pulls
    ctx.onProgress?.({ entries: incoming.length, bytes });
    for (const h of Object.keys(res.cursor)) cursor[h] = res.cursor[h]!;
    if (!creating) cursor[ctx.hostId] = OWN_DONE;
    if (!res.more) break;
  }
  if (result.appended > 0 && !leafAgrees) {
    // Pulled entries went last, but the newest tip may be a local one: pi would resume the other branch.
    const m = await alignLeaf(result.path, 'merged');
    if (m) result.marker = m.id;
  }
  return result;
}

/** "batch 3 of host h1: ..., line 2 of batch 4 of host h1: ..." for the first few. */
function describeProblems(problems: readonly BatchProblem[]): string {
  const shown = problems.slice(0, 3).map((p) => `${p.line !== undefined ? `line ${p.line} of ` : ''}batch ${p.seq} of host ${p.host}: ${p.reason}`);
  return shown.join('; ') + (problems.length > 3 ? `; and ${problems.length - 3} more` : '');
}
