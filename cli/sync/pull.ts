// Pull of one session: batches after the per-host cursor, merged by id into the local file (appended, never
// rewritten); the cursor is saved only after the new entries are fsynced, so a kill -9 re-pulls, never skips.
import { open, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkHeader, type SessionEntry, type SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { findTooDeepValue } from '../../shared/json-limits.js';
import { toJsonText } from '../../shared/json-stringify.js';
import { canonicalJson, exactTexts, mergeEntries, type IncomingEntry, type MergeConflict } from '../../shared/merge.js';
import { ownValue, toNullRecord } from '../../shared/own-keys.js';
import { LIMITS, type Cursor, type PullPage, type SessionMetaResponse } from '../../shared/wire.js';
import { appendEntries, createPulledFile, endsWithNewline, syncFileName, syncNewFolders, syncNewName } from '../store/session-writer.js';
import { appendWhole } from '../store/append-whole.js';
import { ensureCurrent } from '../store/migrate-file.js';
import { readSession } from '../store/session-reader.js';
import { alignLeaf } from '../store/leaf-marker.js';
import { withLocalParent } from '../store/lineage.js';
import { piLayout } from '../store/pi-folders.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { newSessionState, rememberBadBatches, type BatchProblem, type SessionSyncState } from './session-sync-state.js';
import type { SyncContext } from './sync-context.js';
import { PRIVATE_FILE, mkdirPrivate } from '../store/private-fs.js';
import { openPulled } from '../keys/open-pull.js';
import { readMeta, type E2eKeys } from '../keys/sync-keys.js';
import { decode, newFileLines, type Decoded, type NewFileLines } from './pull-decode.js';
import { scanNewFile } from './pull-scan.js';
import { killPoint } from './kill-point.js';
import { restoreMark, startedOver } from './restore-plan.js';
import { ParentWait } from './pull-order.js';

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
  /** `restore` of a session deleted here: its state's cursors and offsets went with the file (startedOver). */
  fromStart?: boolean;
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

/** What the loop keeps of a page: its entries (none when `fresh` holds them as bytes), counts and problems. */
interface Page {
  /** Every entry of the page, for a merge into the file there is; empty when the page creates the file whole. */
  incoming: IncomingEntry[];
  /** The seq of each incoming entry's batch. */
  seqs: number[];
  /** The page's batches decoded, whose bodies a new file can take as they came when every entry is written. */
  decoded: Decoded[];
  /** The page's entries as a new file's lines, when it creates the file and is the session's only page. */
  fresh?: NewFileLines;
  /** Entries decoded (duplicates included), lines skipped, and the body bytes as they came. */
  entries: number;
  skipped: number;
  bytes: number;
  problems: BatchProblem[];
}

/**
 * A page's batches opened (encrypted: every one authenticated before any is merged; a failure throws, nothing
 * written) and decoded. For a file being created they become its lines here, and the parsed entries are let go
 * before the first wait: a pull of many sessions decodes many pages at once, and entries kept across the writes
 * would only be copied by the garbage collector (kept when more pages follow, which merge against them). The usual
 * first pull (one page, one clean chain) makes no entries at all: scanNewFile checks its bytes (pull-scan.ts).
 */
async function readPage(ctx: SyncContext, e2e: E2eKeys | null, session: string, res: PullPage, served: SessionMetaResponse | undefined, creating: boolean): Promise<Page> {
  const batches = e2e ? await openPulled(ctx, e2e, session, res.batches, served) : res.batches;
  let bytes = 0;
  for (const b of res.batches) bytes += typeof b.body === 'string' ? b.body.length : b.body.byteLength;
  // The usual first pull (one page, one clean chain) is checked on its bytes alone; more pages merge against its entries.
  let shaChecked = 0;
  if (creating && !res.more) {
    const scan = scanNewFile(batches);
    if (scan.fresh) return { incoming: [], seqs: [], decoded: [], fresh: scan.fresh, entries: scan.fresh.count, skipped: 0, bytes, problems: [] };
    shaChecked = scan.shaChecked;
  }
  const incoming: IncomingEntry[] = [];
  const seqs: number[] = [];
  const problems: BatchProblem[] = [];
  const decoded: Decoded[] = [];
  let skipped = 0;
  for (const [i, b] of batches.entries()) {
    const d = decode(session, b, ctx.note, i < shaChecked);
    decoded.push(d);
    for (const x of d.entries) {
      incoming.push(x);
      seqs.push(b.envelope.seq);
    }
    skipped += d.skipped;
    for (const p of d.problems) problems.push(p);
  }
  const counts = { entries: incoming.length, skipped, bytes, problems };
  // With more pages, some entries may wait for a parent on a later page (pull-order.ts): the caller makes the lines.
  if (creating && !res.more) return { incoming: [], seqs: [], decoded: [], fresh: newFileLines(decoded, incoming, false), ...counts };
  return { incoming, seqs, decoded, ...counts };
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
    // Its folders noted at once (before another session's conflicts can be linked in them), as session-writer does.
    syncNewFolders(await mkdirPrivate(dirname(p)));
    // Read-write: the last byte is read through the handle the append is made with.
    const fh = await open(p, 'ax+', PRIVATE_FILE).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
      return open(p, 'a+', PRIVATE_FILE);
    });
    let torn = false;
    try {
      // A last line with no '\n' (a crash, an older sessync, a hand edit) is ended first, in the same write: glued
      // onto it, the new record and the fragment would read as one unreadable line.
      const size = (await fh.stat()).size;
      torn = size > 0 && !(await endsWithNewline(fh, size));
      // All of it or (a full disk) none: half a record here would be the only local copy of the other version.
      await appendWhole(fh, p, Buffer.from((torn ? '\n' : '') + text, 'utf8'));
    } finally {
      await fh.close();
    }
    if (torn) ctx.note?.(`${p}: its last line had no line end (cut short, or edited by hand); it is kept as a line of its own and the new records follow it`);
  }
  // The cursor saved after this moves past these entries: the file's name is durable before it (a power cut must not
  // take the only copy here of the other version along with the file's folder entry). Created or found, written to
  // or not: a file left by a first try killed before this fsync (named, its folder never fsynced) is found as it is.
  // Up to the conflicts folder's own name: the folder above it holds the state with the cursor, so a name lost above
  // that takes the cursor with it, and the entries are pulled and set aside again.
  await syncNewName(dirname(p), ctx.state.deferFolderSync, () => dirname(p));
  ctx.note?.(`session ${session}: ${conflicts.length} entr${conflicts.length === 1 ? 'y has' : 'ies have'} the same id as a local one but different content; the local version stays in the log, the other is kept in ${p}`);
  return conflicts.length;
}

export async function pullSession(ctx: SyncContext, session: string, opts: PullOptions = {}): Promise<PullResult> {
  let st: SessionSyncState | null = await ctx.state.load(session);
  /** A restore's mark while its file is not made yet: the only state saved until then (see below). */
  let restoring = false;
  if (st && opts.fromStart) {
    // Durable before the first page is asked for (the journal is flushed then): a restore killed between its pages
    // leaves this host in the cursor, so the next run still pulls the own batches the file has not got yet.
    await ctx.state.save(restoreMark(st, ctx.hostId));
    st = startedOver(st);
    restoring = true;
  }
  // A path of '' is a killed pull's note of a file it was about to create (see `pulling`): none known yet.
  let path = opts.path ?? (st?.path || undefined);
  if (path && !(await stat(path).then(() => true, () => false))) path = undefined;
  const creating = path === undefined;
  /** A killed pull left its note: until this pull's last page is saved, the note stays (see `pulling`). */
  const resumed = st?.pulling !== undefined;
  const result: PullResult = { session, path: path ?? '', batches: 0, appended: 0, duplicates: 0, conflicts: 0, created: false, skipped: 0, problems: [] };
  // Null prototype: host ids are user input, and a host called `constructor` must read as a host, not Object's function.
  const cursor: Cursor = toNullRecord(st?.cursor);
  for (const h of opts.hosts ?? []) if (!Object.hasOwn(cursor, h)) cursor[h] = 0;
  // A file this machine holds has all of its own batches, unless a restore cut short named this host in the cursor;
  // a session being created here (or by a pull that was killed) takes them too.
  const ownLeft = !creating && st !== null && Object.hasOwn(st.cursor, ctx.hostId);
  const ownToo = creating || st?.pulling?.creating === true || ownLeft;
  if (!ownToo) cursor[ctx.hostId] = OWN_DONE;
  else if (!ownLeft) delete cursor[ctx.hostId];

  let local: Map<string, SessionEntry> | null = null;
  /** Highest seq of this host's own batches seen while creating the file: over every page, not only the first. */
  let ownSeq = 0;
  /** Known that the file's last entry is its newest tip (as created here, nothing appended since): no marker needed. */
  let leafAgrees = false;
  const e2e = (await ctx.e2e?.()) ?? null;
  /** Entries are in the file (or about to be) whose ids no saved state holds yet. */
  let unrecorded = false;
  /** Entries that came before their parent, held until it is written (pull-order.ts); their hosts are not asked meanwhile. */
  const wait = new ParentWait();
  /** Hosts whose every batch is read: asked, not skipped, by a request the server had nothing more for. */
  const done = new Set<string>();
  /** Hosts asked although entries of theirs wait: every host still unread waits, so only they can bring the parents. */
  let unskip = new Set<string>();
  /** The leaf is being aligned with what this pull wrote: a failure there keeps the note, so the next run aligns. */
  let aligning = false;
  try {
    for (;;) {
      // Before the request leaves (the journal's flush before it makes this durable): the entries it brings may be in
      // the file from here on before their ids are saved, and a kill there must not let the next push send them.
      // A killed pull's note keeps its own `from`: what it wrote since is the server's, not this machine's.
      const from = st?.pulling?.from ?? (path === undefined ? 0 : (await stat(path)).size);
      // A restore whose file is not made yet notes its pull on the started-over state with its mark's cursor (this
      // host at 0): the cursor keeps the session deleted here and restorable if it stops before the file exists, and
      // the note makes a run after a kill once the file exists pull it again (every id the server has skipped) before
      // any push, which would otherwise send the server's entries back from offset 0 as this machine's.
      // A state new here is of a session the server holds (meta and all): not one whose meta is still to send.
      const base = restoring && path === undefined && st ? restoreMark(st, ctx.hostId) : (st ?? { ...newSessionState(session, path ?? ''), metaSent: true });
      await ctx.state.save({ ...base, pulling: { from, ...(ownToo ? { creating: true as const } : {}) } });
      // A session new here asks for its meta with the page (header, cwd, sealed key): one request, not two.
      const ask = path === undefined ? { withMeta: true } : {};
      // A host with entries waiting for their parent is told it is done, so the page brings the other hosts' batches.
      const waiting = wait.hosts();
      const skipped = new Set([...waiting].filter((h) => !unskip.has(h)));
      const sent: Cursor = toNullRecord(cursor);
      for (const h of skipped) sent[h] = OWN_DONE;
      const res = await (ctx.pull ? ctx.pull(session, sent, ask) : ctx.api.pullPage(session, sent, ask));
      // Only this session's: a server that answers another's is not believed (the meta is then asked for alone).
      const served = res.meta?.session === session ? res.meta : undefined;
      const page = await readPage(ctx, e2e, session, res, served, path === undefined);
      const { problems } = page;
      for (const h of Object.keys(res.cursor)) if (!skipped.has(h)) cursor[h] = res.cursor[h]!;
      // The answer's cursor too: a host the cursor sent did not name yet (no heads passed, or new since) was served.
      if (!res.more) for (const h of [...Object.keys(sent), ...Object.keys(res.cursor), ...waiting]) if (!skipped.has(h)) done.add(h);
      // Nothing more for the hosts asked: only the skipped hosts not read to their end can bring what still waits.
      const unread = res.more ? null : new Set([...skipped].filter((h) => !done.has(h)));
      /** More pages to ask for: the server said so, or skipped hosts have batches after the waiting ones. */
      const more = res.more || unread!.size > 0;
      /** The entries to write now (`whole`: all of the page's, and no others), given the ids the file holds. */
      const take = (written: ReadonlyMap<string, unknown> | null): { incoming: IncomingEntry[]; whole: boolean } => {
        const incoming = wait.ready(page.incoming, page.seqs, (id) => written?.has(id) === true);
        const whole = wait.size === 0 && incoming.length === page.incoming.length;
        // What no unread host can bring (see ParentWait.unreachable); the rest waits for their next pages, not drained
        // now: an entry waiting for a skipped host's later batch would come before its parent.
        if (unread) incoming.push(...wait.unreachable(unread));
        return { incoming, whole };
      };
      result.skipped += page.skipped;
      result.problems.push(...problems);
      result.batches += res.batches.length;

      if (path === undefined) {
        if (page.entries === 0 && problems.length > 0 && !res.more) {
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
        path = join(ctx.flat ? ctx.sessionsRoot : projectDir(ctx.sessionsRoot, cwd), sessionFileName(String(header.timestamp), session));
        // The session's one page as it came; else what of this page can be written before the later pages (the
        // entries kept: those pages merge against them). Nothing may be ready (its parents on the next page): the
        // file then starts as its header alone, as a file here that the next pages append to.
        let fresh = page.fresh;
        if (!fresh) {
          const now = take(null);
          fresh = newFileLines(now.whole ? page.decoded : null, now.incoming, true);
        }
        unrecorded = true;
        const tail = await createPulledFile(path, header, fresh, ctx.env, { more, deferFolderSync: ctx.state.deferFolderSync });
        // Written parents-first with the newest tip last: pi's leaf and sessync's agree unless the tip rule differs.
        leafAgrees = tail.lastId === tail.leafId;
        result.path = path;
        result.created = true;
        result.appended += fresh.count;
        result.duplicates += fresh.duplicates;
        result.conflicts += await setAside(ctx, session, fresh.conflicts);
        // A later page merges against what this one wrote (kept for that only: most sessions are one page).
        local = new Map((fresh.entries ?? []).map((e) => [e.id, e]));
        st = { ...(st ?? newSessionState(session, path)), path, pushedOffset: tail.size, skipIds: [], metaSent: true };
      } else {
        if (st === null || st.path !== path) {
          // A file here with no state, or at another path than its state's (moved): a killed pull's (its name in its
          // folder maybe never fsynced: that was left to the journal it never wrote), or another program's such as
          // pi's. Its name and its folders' are made durable before a cursor says it holds these entries; once per
          // folder per process.
          await syncFileName(path, ctx.state.deferFolderSync, ctx.env);
          st ??= newSessionState(session, path);
        }
        // A file a killed pull created came from the server, meta and all (as a file created here above): its push
        // must not send the meta again in an empty first batch.
        if (st.pulling?.creating && !st.metaSent) st = { ...st, metaSent: true };
        if (page.incoming.length > 0 || wait.size > 0) {
          if (local === null) {
            // Appending needs the current format; pi migrates the same way on open.
            const mig = await ensureCurrent(path, ctx.env);
            if (mig?.changed) ctx.note?.(`migrated ${path}: format ${mig.fromVersion} -> ${mig.toVersion} (original kept as ${mig.backup})`);
            local = new Map((await readSession(path)).entries.map((e) => [e.id, e]));
          }
        }
        const have = local;
        const { incoming } = take(have);
        if (have !== null && incoming.length > 0) {
          const m = mergeEntries(have, incoming);
          if (m.toAppend.length > 0) {
            unrecorded = true;
            await appendEntries(path, m.toAppend, { texts: exactTexts(incoming), env: ctx.env }); // fsynced before it returns
            leafAgrees = false;
          }
          for (const e of m.toAppend) have.set(e.id, e);
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
      if (ownToo) ownSeq = Math.max(ownSeq, ownValue(cursor, ctx.hostId) ?? 0);
      const saved: Cursor = toNullRecord(cursor);
      // A host's entries waiting for their parent are not in the file: its saved cursor stays before their batch.
      for (const [h, seq] of wait.lowestSeqs()) saved[h] = Math.min(saved[h] ?? 0, seq - 1);
      // Own batches still to come on later pages: this host stays in the saved cursor until the last page.
      if (!(ownToo && more)) delete saved[ctx.hostId];
      else saved[ctx.hostId] ??= 0;
      // Our own batches came with the file: the next one we push follows the highest of them. Damaged batches
      // are passed (the good ones after them are merged) and remembered in the state, reported once here.
      // The note of a pull under way goes with the last page's state: every entry the server has is in skipIds now.
      // With more pages, the next round notes it again before its request.
      const { pulling: _done, ...kept } = st;
      st = { ...kept, path, cursor: saved, nextSeq: Math.max(st.nextSeq, ownSeq + 1), ...rememberBadBatches(st, problems) };
      killPoint('pull-merged'); // the page's entries are durable in the file, its cursor not yet saved
      // The leaf is aligned before the last page's state, which takes the note away, is saved: that state can be
      // durable at once (another session's request flushes the journal), and a run stopped before the marker (a kill,
      // a full disk) must leave the note, so that the next run pulls again and aligns, as it would have.
      if (!more) {
        aligning = true;
        const marker = await alignAfterPull(ctx, result, resumed, leafAgrees);
        if (marker) result.marker = marker;
        aligning = false;
      }
      await ctx.state.save(st); // after the fsync of the entries: a crash before this line only re-pulls
      unrecorded = false;
      ctx.onProgress?.({ entries: page.entries, bytes: page.bytes });
      if (!ownToo) cursor[ctx.hostId] = OWN_DONE;
      // Every unread host has entries waiting: skipped, none would be asked; asked on, each is read to its end.
      if (unread) unskip = [...unread].every((h) => wait.hosts().has(h)) ? unread : new Set();
      if (!more) break;
    }
  } catch (e) {
    // Failed with every entry this call appended recorded, not while aligning the leaf with them, and no killed pull's
    // note to resolve: the note of this pull is taken back, so the session's push is not held for a pull that brought
    // nothing unrecorded. Else it stays, and the next run pulls again (and aligns) before it pushes.
    if (restoring && path === undefined) {
      // Nothing written: the restore's marked note stays as saved, so the session is still deleted here and restore can run again.
    } else if (!unrecorded && !resumed && !aligning) {
      if (st) await ctx.state.save(st);
      else await ctx.state.forget(session);
    }
    throw e;
  }
  return result;
}

/** The checkout marker's id when the pull's last line is not the newest tip (which pi would then not resume). */
async function alignAfterPull(ctx: SyncContext, result: PullResult, resumed: boolean, leafAgrees: boolean): Promise<string | undefined> {
  killPoint('pull-aligning'); // every page's entries in the file, the leaf not yet aligned with them
  // A killed pull's note (`resumed`): it may have appended entries and died before this marker, and pulled again
  // they are duplicates, nothing appended; the file's last line is still a pulled one, so the check is made anyway.
  if ((result.appended === 0 && !resumed) || leafAgrees) return undefined;
  // Pulled entries went last, but the newest tip may be a local one: pi would resume the other branch.
  return (await alignLeaf(result.path, 'merged', undefined, ctx.env))?.id;
}

/**
 * Ids of the entries a pull again of a session with a killed pull's note would bring (read, merged nowhere): from the
 * cursor the note carries, this machine's own batches too when that pull was creating the file. Status tells with
 * them the entries that pull wrote from the ones written here since.
 */
export async function idsToPullAgain(ctx: SyncContext, st: SessionSyncState): Promise<Set<string>> {
  const cursor: Cursor = toNullRecord(st.cursor);
  if (st.pulling?.creating) delete cursor[ctx.hostId];
  else cursor[ctx.hostId] = OWN_DONE;
  const e2e = (await ctx.e2e?.()) ?? null;
  const ids = new Set<string>();
  for (;;) {
    const res = await ctx.api.pullPage(st.session, cursor);
    for (const x of (await readPage(ctx, e2e, st.session, res, undefined, false)).incoming) ids.add(x.entry.id);
    for (const h of Object.keys(res.cursor)) cursor[h] = res.cursor[h]!;
    if (!st.pulling?.creating) cursor[ctx.hostId] = OWN_DONE;
    if (!res.more) return ids;
  }
}

/** "batch 3 of host h1: ..., line 2 of batch 4 of host h1: ..." for the first few. */
function describeProblems(problems: readonly BatchProblem[]): string {
  const shown = problems.slice(0, 3).map((p) => `${p.line !== undefined ? `line ${p.line} of ` : ''}batch ${p.seq} of host ${p.host}: ${p.reason}`);
  return shown.join('; ') + (problems.length > 3 ? `; and ${problems.length - 3} more` : '');
}
