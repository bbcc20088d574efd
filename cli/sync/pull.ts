// Pull of one session: batches after the per-host cursor, merged by id into the local file (appended, never
// rewritten); the cursor is saved only after the new entries are fsynced, so a kill -9 re-pulls, never skips.
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { checkEntry, type SessionEntry, type SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { canonicalJson, mergeEntries, type IncomingEntry, type MergeConflict } from '../../shared/merge.js';
import type { Cursor, SessionMetaResponse, StoredBatch } from '../../shared/wire.js';
import { createSessionFile, appendEntries } from '../store/session-writer.js';
import { ensureCurrent } from '../store/migrate-file.js';
import { readSession } from '../store/session-reader.js';
import { alignLeaf } from '../store/leaf-marker.js';
import { withLocalParent } from '../store/lineage.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { newSessionState, type SessionSyncState } from './sync-state.js';
import type { SyncContext } from './sync-context.js';

/** A cursor value past any seq: tells the server not to send this host's own batches back. */
const OWN_DONE = 1e12;

export interface PullOptions {
  /** The local file, when the session exists here. */
  path?: string;
  /** For a session new to this machine: the local project folder to file it under (its header cwd). */
  placeFor?: (meta: SessionMetaResponse) => Promise<string>;
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
  /** Id of the checkout marker appended so that pi's leaf (the last line) is sessync's leaf again; it needs a push. */
  marker?: string;
}

function decode(session: string, b: StoredBatch, note: SyncContext['note']): { entries: IncomingEntry[]; skipped: number } {
  if (b.envelope.encoding !== 'jsonl') {
    throw new SessyncError('unsupported_version', `session ${session}: batch ${b.envelope.seq} of host ${b.envelope.host} is ${b.envelope.encoding}-encrypted; this sessync cannot read it`);
  }
  const sha = createHash('sha256').update(b.body, 'utf8').digest('hex');
  if (sha !== b.envelope.sha256) {
    throw new SessyncError('corrupt', `session ${session}: batch ${b.envelope.seq} of host ${b.envelope.host} does not match its sha-256; not merging it`, { retryable: true });
  }
  const entries: IncomingEntry[] = [];
  let skipped = 0;
  let lineNo = 0;
  for (const line of b.body.split('\n')) {
    lineNo++;
    if (line.trim() === '') continue;
    let v: unknown;
    let why: string | null;
    try {
      v = JSON.parse(line);
      why = checkEntry(v);
    } catch (e) {
      why = `not JSON (${(e as Error).message})`;
    }
    if (why) {
      skipped++;
      note?.(`session ${session}: line ${lineNo} of batch ${b.envelope.seq} from host ${b.envelope.host} not merged: ${why}`);
      continue;
    }
    entries.push({ entry: v as SessionEntry, host: b.envelope.host });
  }
  return { entries, skipped };
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
    text += JSON.stringify({ id: c.id, host: c.host ?? null, detected: new Date().toISOString(), kept: c.kept, entry: c.aside }) + '\n';
  }
  if (text) {
    await mkdir(dirname(p), { recursive: true });
    const fh = await open(p, 'a', 0o600);
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
  const result: PullResult = { session, path: path ?? '', batches: 0, appended: 0, duplicates: 0, conflicts: 0, created: false, skipped: 0 };
  const cursor: Cursor = { ...(st?.cursor ?? {}) };
  // A file this machine holds has all of its own batches; a session being created here takes them too.
  if (!creating) cursor[ctx.hostId] = OWN_DONE;
  else delete cursor[ctx.hostId];

  let local: Map<string, SessionEntry> | null = null;
  /** Highest seq of this host's own batches seen while creating the file: over every page, not only the first. */
  let ownSeq = 0;
  for (;;) {
    const res = await ctx.api.pull(session, cursor);
    const incoming: IncomingEntry[] = [];
    for (const b of res.batches) {
      const d = decode(session, b, ctx.note);
      incoming.push(...d.entries);
      result.skipped += d.skipped;
    }
    result.batches += res.batches.length;
    let bytes = 0;
    for (const b of res.batches) bytes += b.body.length;

    if (path === undefined) {
      // A session announced by an empty batch (only a header so far) is created here with its header alone.
      if (res.batches.length === 0 && !res.more) {
        throw new SessyncError('not_found', `session ${session} has no entries on the server yet`);
      }
      const meta = await ctx.api.sessionMeta(session);
      const cwd = opts.placeFor ? await opts.placeFor(meta) : String(meta.header.cwd ?? meta.cwd ?? '');
      if (!cwd) throw new SessyncError('corrupt', `session ${session}: the server's header has no cwd`);
      // Local facts: the cwd here, and the parent's file here (pi's picker nests a fork under it by path).
      const header = await withLocalParent(ctx.sessionsRoot, { ...meta.header, cwd } as SessionHeader);
      const m = mergeEntries(new Map(), incoming);
      path = join(projectDir(ctx.sessionsRoot, cwd), sessionFileName(String(header.timestamp), session));
      await createSessionFile(path, header, m.toAppend);
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
        if (m.toAppend.length > 0) await appendEntries(path, m.toAppend); // fsynced before it returns
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
    if (creating) ownSeq = Math.max(ownSeq, res.cursor[ctx.hostId] ?? 0);
    const saved: Cursor = { ...res.cursor };
    delete saved[ctx.hostId];
    // Our own batches came with the file: the next one we push follows the highest of them.
    st = { ...st, path, cursor: saved, nextSeq: Math.max(st.nextSeq, ownSeq + 1) };
    await ctx.state.save(st); // after the fsync of the entries: a crash before this line only re-pulls
    ctx.onProgress?.({ entries: incoming.length, bytes });
    Object.assign(cursor, res.cursor);
    if (!creating) cursor[ctx.hostId] = OWN_DONE;
    if (!res.more) break;
  }
  if (result.appended > 0) {
    // Pulled entries went last, but the newest tip may be a local one: pi would resume the other branch.
    const m = await alignLeaf(result.path, 'merged');
    if (m) result.marker = m.id;
  }
  return result;
}
