// One push / pull / sync run: scope (ref, this project, --all) -> status -> plan -> push and pull each session.
import { realpath } from 'node:fs/promises';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { ownValue } from '../../shared/own-keys.js';
import { diffSessions, headsBySession, planSync, type LocalStatus, type SyncOp } from '../../shared/sync-plan.js';
import type { Head, SessionMetaResponse, Tombstone } from '../../shared/wire.js';
import { ApiClient, reportRetries, type WaitReport } from '../api-client.js';
import { fsError } from '../fs-error.js';
import { requireLogin } from '../login-store.js';
import { withFileLock } from '../store/file-lock.js';
import { realCwd as toRealCwd, sessionsRoot, sessyncHome } from '../store/paths.js';
import { listSessions, type SessionSummary } from '../store/session-index.js';
import { resolveSession } from '../store/resolve.js';
import { piLayout } from '../store/pi-folders.js';
import { idMatches } from '../format/short-id.js';
import { placeInProject, projectKey } from './project-key.js';
import { remoteAgents, remoteProjectKeys } from './remote-keys.js';
import { droppedSessions } from './dropped.js';
import { restorePlan } from './restore-plan.js';
import { projectKeysHere } from './project-scope.js';
import { otherProjects, type OtherProjects } from './other-projects.js';
import { pushSession } from './push.js';
import { PushBatcher } from './push-batcher.js';
import { PullBatcher } from './pull-batcher.js';
import { pullSession } from './pull.js';
import { saveQueuedSummaries } from '../store/summary-pending.js';
import { withPullJournal } from './pull-journal.js';
import { SyncState } from './sync-state.js';
import { serverKey, type BatchProblem } from './session-sync-state.js';
import { applyTombstones, onPullGone, onPushGone, undelete, type DeletedNote } from './tombstones.js';
import { e2eLoader } from '../keys/sync-keys.js';
import type { Mirrors, SyncContext } from './sync-context.js';
import type { Progress } from './progress.js';
import { mkdirPrivate } from '../store/private-fs.js';
import { saveCache } from '../store/cache-save.js';
import type { Interrupt } from './interrupt.js';

export type SyncMode = 'push' | 'pull' | 'sync';

export interface RunOptions {
  mode: SyncMode;
  ref?: string;
  all?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `--map KEY=PATH`: where sessions of a project go on this machine (saved for later runs). */
  maps?: Record<string, string>;
  progress?: Progress;
  note?: (text: string) => void;
  /** Retries: what the run waits for (default: through note). */
  wait?: WaitReport;
  /** A client to use instead of the saved login (benches count its requests). */
  api?: ApiClient;
  /** Note per-session errors as they happen (default); a watcher reports them itself, once per change. */
  noteErrors?: boolean;
  /** Sessions new to this machine are pulled only when their meta names this agent (no agent in the meta: pi). */
  agent?: string;
  /** The sessions are sessync's mirrors of this agent's files (see Mirrors). */
  mirrors?: Mirrors;
  /** Pull sessions whose file this machine deleted after syncing them (`sessync restore`); a sync leaves them. */
  restore?: boolean;
  /** `sync --apply-deletes`: remove local files of sessions deleted on the server (default: keep them, unpushed). */
  applyDeletes?: boolean;
  /** `push <ref> --undelete`: put a session deleted on the server back, pushing the whole local file. */
  undelete?: boolean;
  /** Ctrl-C / SIGTERM: the run stops before its next request (its state saved by the finally blocks on the way out). */
  interrupt?: Interrupt;
  /** After a many-session push: the durable state writes it made and the multi-session requests (tests count them). */
  onJournal?: (x: { fsyncs: number; requests: number }) => void;
}

export interface SessionOutcome {
  session: string;
  path?: string;
  pushed?: { batches: number; entries: number; bytes: number };
  pulled?: { batches: number; entries: number; duplicates: number; created: boolean };
  conflicts?: number;
  skipped?: number;
  /** Why lines were not pushed (the first 100): --json hides the notes printed on stderr. */
  skippedLines?: { offset: number; reason: string }[];
  /** Stored batches (no `line`) or lines of them the pull passed over as damaged (the first 100), by host and seq. */
  badBatches?: BatchProblem[];
  error?: { code: string; message: string; retryable: boolean };
  /**
   * A pull of it was cut short earlier (its note `pulling`) and pulling it again failed in this run: its push waits for
   * that pull, so that no entry the server sent goes back as this machine's. Its `error` says why.
   */
  pushHeld?: true;
}

/** Why a session's pulled lines wait in the mirror (RunSummary.exportWaiting). */
export type ExportWait = 'writing' | 'open' | 'failed';

export interface RunSummary {
  mode: SyncMode;
  sessionsChecked: number;
  pushedSessions: number;
  pushedEntries: number;
  pushedBytes: number;
  pulledSessions: number;
  pulledEntries: number;
  createdSessions: number;
  conflicts: number;
  skippedLines: number;
  /** Whole stored batches passed over as damaged (their bad lines count in skippedLines). */
  damagedBatches: number;
  failed: number;
  /** Of those, sessions whose push is held because a killed pull of them could not be done again (see pushHeld). */
  pushHeld: number;
  /** Session files not looked at because their header is unreadable (reported, never skipped silently). */
  skippedFiles: { path: string; reason: string }[];
  /** Heads the server listed with names no sessync server accepts (the first 20): not synced. */
  ignoredHeads?: Head[];
  requests: number;
  sessions: SessionOutcome[];
  /** Sessions deleted on the server that this machine has (kept, removed with --apply-deletes, or restored). */
  deleted: DeletedNote[];
  /** Codex forks this run made: which session, from which, why, and whether this machine's own work moved into it. */
  forks?: { fork: string; from: string; reason: string; mine: boolean }[];
  /**
   * Sessions whose pulled lines are in sessync's mirror but not yet in the agent's own files: the next sync writes them
   * there. `why`: one of its files ends in a line the agent is still writing, the agent has it open (Codex, for a fork),
   * or the write failed (said in a note).
   */
  exportWaiting?: { agent: string; session: string; why: ExportWait }[];
  /** A pull or sync of this project (no ref, no --all): the sessions on the server of other projects, left alone. */
  otherProjects?: OtherProjects;
}

/** Login, client, state, host id: what every network command needs. */
export async function openSync(env: NodeJS.ProcessEnv, o: { api?: ApiClient; note?: (t: string) => void; wait?: WaitReport } = {}): Promise<SyncContext> {
  let api = o.api;
  if (!api) {
    const note = o.note;
    api = ApiClient.forLogin(await requireLogin(env), { onRetry: reportRetries(o.wait ?? ((t) => note?.(t))) });
  }
  // Server and account from the client itself: a watcher's own client and a one-off sync share one state folder.
  const state = new SyncState(sessyncHome(env), serverKey(api.url, api.account));
  await mkdirPrivate(state.dir);
  const ctx: SyncContext = { api, state, hostId: await state.hostId(o.note), sessionsRoot: sessionsRoot(env), env, e2e: e2eLoader(api, env) };
  if (piLayout(env).flat) ctx.flat = true;
  if (o.note) ctx.note = o.note;
  return ctx;
}

/** Holds the sync lock of this SESSYNC_HOME: two sync processes never interleave batches of one session. */
export function withSyncLock<T>(ctx: SyncContext, fn: () => Promise<T>): Promise<T> {
  return withFileLock(ctx.state.lockTarget(), async () => {
    await ctx.state.recover(); // a killed run's journal: its states are the newest
    return fn();
  }, { timeoutMs: 60_000 });
}

/** Where a session new to this machine goes: --map, this project when the key matches, a saved mapping, else its own cwd. */
export function placer(ctx: SyncContext, o: { maps?: Record<string, string>; cwdKey?: string; realCwd?: string }): (meta: SessionMetaResponse) => Promise<string> {
  // Read once per run (the run holds the sync lock, and writes the map only at its end), not once per new session.
  let projects: Promise<Record<string, string>> | undefined;
  return async (meta) => {
    // Project keys come from the server: own keys only (a key `constructor` must not find Object's function).
    const mapped = o.maps ? ownValue(o.maps, meta.projectKey) : undefined;
    // A session made in a subfolder of its project (its header's cwdInProject) goes to that subfolder of the local one.
    const below = (local: string) => placeInProject(local, meta.header?.cwdInProject);
    if (mapped) return below(await realpath(mapped).catch(() => mapped));
    if (o.cwdKey && o.realCwd && o.cwdKey === meta.projectKey) return below(o.realCwd);
    const saved = ownValue(await (projects ??= ctx.state.projectMap()), meta.projectKey);
    if (saved) return below(saved);
    return String(meta.header?.cwd ?? meta.cwd ?? '');
  };
}

/** Sessions on the server whose id starts with `ref` (or its short form). */
export function matchRemote(heads: readonly Head[], ref: string): string[] {
  return [...new Set(heads.map((h) => h.session))].filter((s) => idMatches(s, ref));
}

export async function runSync(o: RunOptions): Promise<RunSummary> {
  const ctx = await openSync(o.env, o);
  if (o.mirrors) ctx.mirrors = o.mirrors;
  if (o.interrupt) {
    const i = o.interrupt;
    ctx.api.beforeRequest = () => i.check();
  }
  if (o.progress) {
    const p = o.progress;
    ctx.onProgress = (x) => p.moved(x);
  }
  const before = ctx.api.requestCount;
  return withSyncLock(ctx, async () => {
    const root = ctx.sessionsRoot;
    const layout = piLayout(ctx.env);
    const wantsPull = o.mode !== 'push';
    const wantsPush = o.mode !== 'pull';
    let locals: SessionSummary[];
    let only: Set<string> | undefined;
    let fetchRemoteOnly = false;
    let cwdKey: string | undefined;
    let rc: string | undefined;
    const maps = o.maps ?? {};
    if (Object.keys(maps).length) {
      const saved = await ctx.state.projectMap();
      await ctx.state.saveProjectMap({ ...saved, ...maps });
    }
    let heads: Head[] = [];
    const skippedFiles: { path: string; reason: string }[] = [];
    if (o.ref !== undefined) {
      rc = await toRealCwd(o.cwd).catch(() => undefined);
      try {
        locals = [await resolveSession(o.ref, { root, realCwd: rc ?? o.cwd, cwd: o.cwd, ...layout })];
        only = new Set([locals[0]!.id]);
      } catch (e) {
        if (!isSessyncError(e, 'not_found') || !wantsPull) throw e;
        heads = await ctx.api.allHeads();
        const m = matchRemote(heads, o.ref);
        if (m.length === 0) throw new SessyncError('not_found', `no session matches "${o.ref}" here or on the server`);
        if (m.length > 1) throw new SessyncError('ambiguous', `"${o.ref}" matches ${m.length} sessions on the server: ${m.slice(0, 10).join(', ')}; give more characters`, { details: { candidates: m } });
        locals = [];
        only = new Set(m);
      }
      if (rc) cwdKey = await projectKey(rc);
    } else if (o.all) {
      locals = await listSessions({ root, all: true, skipped: skippedFiles, ...layout });
      fetchRemoteOnly = true;
      // Sessions of the project at --cwd still land in this folder (matched by key), others under their own cwd.
      rc = await toRealCwd(o.cwd).catch(() => undefined);
      if (rc) cwdKey = await projectKey(rc);
    } else {
      rc = await toRealCwd(o.cwd);
      locals = await listSessions({ root, realCwd: rc, skipped: skippedFiles, ...layout });
      cwdKey = await projectKey(rc);
      only = new Set(locals.map((l) => l.id));
    }

    for (const f of skippedFiles) o.note?.(`skipped ${f.path}: ${f.reason}`);
    if (o.undelete) {
      if (o.ref === undefined || locals.length !== 1) throw new SessyncError('bad_input', '--undelete needs the reference of a local session: `sessync push <ref> --undelete`');
      if (await undelete(ctx, locals[0]!.id, locals[0]!.path)) o.note?.(`session ${locals[0]!.id}: undeleted on the server; pushing it again`);
    }
    const states = await ctx.state.all();
    const byId = new Map(locals.map((l) => [l.id, l]));
    const status: LocalStatus[] = locals.map((l) => {
      const st = states.get(l.id);
      return { session: l.id, size: l.size, pushedOffset: st?.pushedOffset ?? 0, pendingSeq: st?.pending?.seq ?? null, cursor: st?.cursor ?? {}, nextSeq: st?.nextSeq ?? 1 };
    });
    let deleted: Tombstone[] | null = null;
    if (wantsPull && heads.length === 0) {
      try {
        ({ heads, deleted } = await ctx.api.feed());
      } catch (e) {
        if (!isSessyncError(e, 'unavailable')) throw e;
        // The local answer still comes: what this machine holds that the server has not seen.
        const waiting = status.filter((x) => x.size > x.pushedOffset || x.pendingSeq !== null).length;
        throw new SessyncError('unavailable', `${e.message}. Nothing was synced; here ${locals.length} session(s), ${waiting} with entries to push.`, { retryable: true, details: e.details, cause: e });
      }
    }
    const headsKnown = wantsPull; // push alone does not ask for heads (a no-op push costs no request)
    for (const h of ctx.api.ignoredHeads.slice(0, 20)) o.note?.(ApiClient.ignoredHeadNote(h));
    let others: OtherProjects | undefined;
    if (wantsPull && only && o.ref === undefined && cwdKey) {
      // This project's sessions that only the server has: matched by project key, not by path.
      const remoteOnly = [...new Set(heads.map((h) => h.session))].filter((s) => !byId.has(s));
      const here = rc ? await projectKeysHere(ctx, rc, maps) : new Set([cwdKey]);
      const keys = await remoteProjectKeys(ctx, remoteOnly, heads);
      for (const [s, k] of keys) if (here.has(k)) only.add(s);
      // The other projects' sessions, said so a pull that takes none of this project's is not read as a failure.
      others = await otherProjects(ctx, { heads, local: new Set(byId.keys()), keys, here, projectKey: cwdKey, folder: rc ?? o.cwd, ...(o.agent !== undefined ? { agent: o.agent } : {}) });
    }
    const gone = await applyTombstones(ctx, { deleted, heads, locals, states, applyDeletes: o.applyDeletes === true });
    const hostsBySession = headsBySession(heads);
    let planned: SyncOp[] = planSync(diffSessions(status.filter((x) => !gone.skip.has(x.session)), heads, ctx.hostId), { push: wantsPush, pull: wantsPull, fetchRemoteOnly, headsKnown, ...(only ? { only } : {}) });
    // Each agent's sessions land in that agent's folder: a new one is left to the run of the agent its meta names.
    // Asked too of the project's sessions only the server has and nothing to pull (their metas are cached by now):
    // each counts among the sessions checked by its own agent's run only.
    const fresh = [...new Set([...planned.filter((x) => x.kind !== 'push' && !byId.has(x.session)).map((x) => x.session), ...[...(only ?? [])].filter((s) => !byId.has(s))])];
    const agentOf = o.agent !== undefined && fresh.length > 0 ? await remoteAgents(ctx, fresh, heads) : null;
    // A session synced here and then deleted here stays deleted; `restore` brings it back.
    let dropped = await droppedSessions(states, new Set(byId.keys()), heads, ctx.hostId);
    // Only the named ones, each fetched whole from the start (its own batches too); the others stay deleted here.
    if (o.restore) ({ planned, dropped } = restorePlan(planned, dropped, only, heads));
    for (const d of dropped.values()) {
      if (d.newOnServer > 0 && planned.some((x) => x.session === d.session)) o.note?.(`session ${d.session} was deleted here (${d.path}); the server has ${d.newOnServer} newer batch(es) of it, not pulled back (\`sessync restore ${d.session}\` brings it back)`);
      // Named by the ref (`pull <id>`): said even with nothing newer, or the run's "pulled 0" would be all it said.
      else if (o.ref !== undefined && wantsPull && only?.has(d.session)) o.note?.(`session ${d.session} was deleted here (${d.path}); ${o.mode} leaves it deleted (\`sessync restore ${d.session}\` brings it back)`);
    }
    // A session whose meta could not be read (damaged, or not landed yet) has no known agent: it goes with pi's run,
    // the agent of a meta that names none, so its pull is tried there and its error reported, never dropped silently.
    const ops = planned.filter((x) => !dropped.has(x.session) && (!agentOf || byId.has(x.session) || (agentOf.get(x.session) ?? 'pi') === o.agent));

    // An encrypted account's key is checked against the server's before the first byte is sent or written:
    // missing, old or wrong, the run stops here with what to run.
    if (ops.length > 0) await ctx.e2e?.();
    const outcomes = new Map<string, SessionOutcome>();
    const outcome = (s: string) => {
      let x = outcomes.get(s);
      if (!x) outcomes.set(s, (x = { session: s }));
      return x;
    };
    const place = placer(ctx, { maps, ...(cwdKey ? { cwdKey } : {}), ...(rc ? { realCwd: rc } : {}) });
    const projectMap = await ctx.state.projectMap();
    let mapDirty = false;
    o.progress?.start(new Set(ops.map((x) => x.session)).size);
    /** Ops of each session still to run in this run: the bar counts a session once its last one is done. */
    const opsLeft = new Map<string, number>();
    const runOp = async (op: SyncOp) => {
      try {
        await runOneOp(op);
      } finally {
        // Every way out counts (a session failed by an earlier op runs no other), so the bar ends at its total.
        const left = (opsLeft.get(op.session) ?? 1) - 1;
        opsLeft.set(op.session, left);
        if (left === 0) o.progress?.sessionDone();
      }
    };
    const runOneOp = async (op: SyncOp) => {
      const out = outcome(op.session);
      if (out.error || gone.skip.has(op.session)) return;
      try {
        if (op.kind === 'push') {
          const l = byId.get(op.session)!;
          const r = await pushSession(ctx, { session: l.id, path: l.path, ...(l.name ? { name: l.name } : {}), ...(op.resetTo !== undefined ? { resetTo: op.resetTo } : {}) });
          out.path = l.path;
          // Added to, not set: a session pulled again first (a killed pull's note) may have pushed its leaf marker then.
          out.pushed = { batches: (out.pushed?.batches ?? 0) + r.batches, entries: (out.pushed?.entries ?? 0) + r.entries, bytes: (out.pushed?.bytes ?? 0) + r.bytes };
          if (r.skipped.length) {
            out.skipped = (out.skipped ?? 0) + r.skipped.length;
            out.skippedLines = r.skipped.slice(0, 100);
          }
          const key = await projectKey(l.cwd);
          if (!key.startsWith('path:') && ownValue(projectMap, key) === undefined) {
            projectMap[key] = l.cwd;
            mapDirty = true;
          }
        } else {
          const l = byId.get(op.session);
          const hosts = hostsBySession.get(op.session)?.keys();
          const r = await pullSession(ctx, op.session, { ...(l ? { path: l.path } : {}), placeFor: place, ...(hosts ? { hosts } : {}), ...(op.kind === 'fetch' && op.fromStart ? { fromStart: true } : {}) });
          out.path = r.path;
          out.pulled = { batches: r.batches, entries: r.appended, duplicates: r.duplicates, created: r.created };
          if (r.conflicts) out.conflicts = r.conflicts;
          if (r.skipped) out.skipped = (out.skipped ?? 0) + r.skipped;
          if (r.problems.length) out.badBatches = r.problems.slice(0, 100);
          if (r.marker && wantsPush) {
            // The leaf marker the merge needed goes out in this run, so the other machines get the same leaf.
            const p = await pushSession(ctx, { session: op.session, path: r.path });
            out.pushed = { batches: (out.pushed?.batches ?? 0) + p.batches, entries: (out.pushed?.entries ?? 0) + p.entries, bytes: (out.pushed?.bytes ?? 0) + p.bytes };
          }
        }
      } catch (e) {
        if (op.kind === 'push' && (await onPushGone(ctx, op.session, byId.get(op.session)!.path, e))) return;
        const again = op.kind !== 'push' && replayed.has(op.session);
        if (again) {
          // Deleted on the server since its killed pull: as a sync that reads the tombstone, kept here, left alone.
          const note = await onPullGone(ctx, op.session, byId.get(op.session)!.path, e);
          if (note) {
            gone.skip.add(op.session);
            gone.notes.push(note);
            return;
          }
        }
        // The server gone or the token refused: stop, the next run resumes. Anything about this one session (its
        // file locked by a writer, a corrupt batch, a refused line, even a fault of this client on its content):
        // reported for it, the other sessions go on.
        if (isSessyncError(e) && ABORTS_RUN.has(e.code)) throw e;
        const err = fsError(e); // a raw fs error (this session's folder unwritable, the disk full) says where and what to do
        out.error = isSessyncError(err) ? { code: err.code, message: err.message, retryable: err.retryable } : { code: 'internal', message: `unexpected error: ${(e as Error)?.message ?? String(e)}`, retryable: false };
        const problems = isSessyncError(e) ? (e.details as { problems?: BatchProblem[] } | undefined)?.problems : undefined;
        if (problems?.length) out.badBatches = problems;
        if (again) {
          out.pushHeld = true;
          out.error.message = `${out.error.message}; an earlier pull of it was cut short, and its push waits until a pull of it succeeds (the entries that pull may have written must not go back as this machine's): ${out.error.retryable ? 'run sync again' : 'fix the cause above, then run sync again'}`;
        }
        if (o.noteErrors !== false) o.note?.(`session ${op.session}: ${out.error.message}`);
      }
    };
    const pullPhase = async (pulls: readonly SyncOp[]) => {
      if (pulls.length > 1) {
        // Many sessions at once, their pages gathered into shared requests, as for pushes. Their states (cursors,
        // new files' offsets) go to the journal too: one durable write per request, not one per pulled page. A page's
        // entries are fsynced in its file before its state is saved, so a crash that loses journaled cursors only
        // pulls those pages again, and the merge by id appends none of their entries twice.
        ctx.state.openJournal();
        const batcher = new PullBatcher(flushingBefore(ctx, isPullRoute), BATCHED_PULL_PARALLEL / 2);
        ctx.pull = (session, cursor, o) => batcher.pull(session, cursor, o);
        // The leaf markers a merge needs are pushed in this phase: their pending batch is durable before it leaves.
        ctx.pushBatch = async (req) => {
          await ctx.state.flushJournal();
          return ctx.api.pushBatch(req);
        };
        try {
          await inParallel(pulls, BATCHED_PULL_PARALLEL, (op) => batcher.around(() => runOp(op)));
        } finally {
          delete ctx.pull;
          delete ctx.pushBatch;
          await ctx.state.closeJournal();
        }
      } else if (pulls.length === 1) await withPullJournal(ctx, () => runOp(pulls[0]!)); // its pages' states journaled too
    };
    // A pull killed mid-way (kill -9, a power cut) left the note `pulling` in its sessions' states: entries it wrote
    // may be in the file with no durable record that the server has them. Those sessions are pulled again first,
    // whatever the mode, before any push reads them: the pages come again and their ids are recorded (the merge
    // appends none twice). A session whose pull fails here is not pushed (runOp skips a session with an error).
    const replays: SyncOp[] = [...new Set(ops.map((x) => x.session))].filter((s) => byId.has(s) && states.get(s)?.pulling !== undefined).map((session) => ({ kind: 'pull', session, batches: 0 }));
    const replayed = new Set(replays.map((x) => x.session));
    // A session pulled again first is not pulled again after its push (see below): that pull is not one of its ops.
    for (const x of [...replays, ...ops.filter((y) => y.kind === 'push' || !replayed.has(y.session))]) opsLeft.set(x.session, (opsLeft.get(x.session) ?? 0) + 1);
    try {
      await pullPhase(replays);
      // Sessions are independent (each its own state record and seqs, wherever the state is kept: own file, journal or
      // pack): several at once hide request latency and fsyncs.
      // All pushes finish before any pull starts, so a pull never meets this machine's batch still in flight.
      const pushes = ops.filter((x) => x.kind === 'push');
      if (pushes.length > 1) {
        // Many sessions at once, their batches gathered into shared requests: one session at a time is latency-bound.
        // Their states go to one journal, made durable once per request (before it leaves), compacted at the end.
        ctx.state.openJournal();
        const batcher = new PushBatcher(flushingBefore(ctx, isPushRoute), PUSH_BATCHES_PER_REQUEST);
        batcher.maxInFlight = BATCHED_PUSH_PARALLEL / PUSH_BATCHES_PER_REQUEST; // large batches: fewer a request, not more requests
        ctx.pushBatch = (req) => batcher.push(req);
        ctx.readTurn = turns(PUSH_READING);
        try {
          await inParallel(pushes, BATCHED_PUSH_PARALLEL, (op) => batcher.around(() => runOp(op)));
        } finally {
          delete ctx.pushBatch;
          delete ctx.readTurn;
          o.onJournal?.({ fsyncs: ctx.state.journalFsyncs(), requests: batcher.requests });
          await ctx.state.closeJournal();
        }
      } else await inParallel(pushes, PUSH_PARALLEL, runOp);
      // A session pulled again above is up to date with the heads this run read: not pulled twice.
      await pullPhase(ops.filter((x) => x.kind !== 'push' && !replayed.has(x.session)));
    } finally {
      o.progress?.stop();
      if (mapDirty) await ctx.state.saveProjectMap(projectMap);
      // The list rows of the files the pulls created, one write per folder. A cache: a failure costs the next list a read.
      // An fs error is said once per process with the other unsaved caches (saveCache); anything else here.
      await saveCache('list', saveQueuedSummaries()).catch((e: unknown) => o.note?.(`could not save the list cache (${(e as Error).message}); the next list reads the files`));
    }
    const sessions = [...outcomes.values()];
    // This agent's sessions: the project's sessions only the server has include other agents', left to their runs.
    const ours = (s: string) => byId.has(s) || !agentOf || (agentOf.get(s) ?? 'pi') === o.agent;
    return {
      mode: o.mode,
      sessionsChecked: new Set([...locals.map((l) => l.id), ...[...(only ?? [])].filter(ours), ...outcomes.keys()]).size,
      pushedSessions: sessions.filter((s) => (s.pushed?.entries ?? 0) > 0).length,
      pushedEntries: sum(sessions, (s) => s.pushed?.entries ?? 0),
      pushedBytes: sum(sessions, (s) => s.pushed?.bytes ?? 0),
      // Sessions the pull wrote into: a new one counts even with only its header, so "N new here" is never more than N.
      pulledSessions: sessions.filter((s) => (s.pulled?.entries ?? 0) > 0 || s.pulled?.created).length,
      pulledEntries: sum(sessions, (s) => s.pulled?.entries ?? 0),
      createdSessions: sessions.filter((s) => s.pulled?.created).length,
      conflicts: sum(sessions, (s) => s.conflicts ?? 0),
      skippedLines: sum(sessions, (s) => s.skipped ?? 0),
      damagedBatches: sum(sessions, (s) => (s.badBatches ?? []).filter((b) => b.line === undefined).length),
      failed: sessions.filter((s) => s.error).length,
      pushHeld: sessions.filter((s) => s.pushHeld).length,
      skippedFiles,
      ...(ctx.api.ignoredHeads.length ? { ignoredHeads: ctx.api.ignoredHeads.slice(0, 20) } : {}),
      requests: ctx.api.requestCount - before,
      sessions,
      deleted: gone.notes,
      ...(others ? { otherProjects: others } : {}),
    };
  });
}

/** Requests that carry batches (POST /v1/batches, and the single route the push batcher falls back to). */
const isPushRoute = (key: string) => key.startsWith('pushBatch');
/** Pull requests (POST /v1/pulls, and the single-session route): each ends the wait of a request's worth of pages. */
const isPullRoute = (key: string) => key.startsWith('pullPage');

/**
 * A client whose requests named by `flushes` first make the journal durable. For pushes, so a batch is written
 * down before it can arrive; for pulls, so the states saved since the last request are durable once per request.
 */
function flushingBefore(ctx: SyncContext, flushes: (key: string) => boolean): ApiClient {
  const api = ctx.api;
  return new Proxy(api, {
    get(target, key) {
      const v: unknown = Reflect.get(target, key, target);
      if (typeof v !== 'function') return v;
      const f = v as (...a: unknown[]) => unknown;
      if (typeof key === 'string' && flushes(key)) {
        return async (...a: unknown[]) => {
          await ctx.state.flushJournal();
          return f.apply(target, a);
        };
      }
      return f.bind(target);
    },
  });
}

/** Errors about the server or the login, not about one session: the whole run stops (and --watch backs off). */
const ABORTS_RUN: ReadonlySet<string> = new Set(['unavailable', 'unauthorized', 'forbidden', 'wrong_server', 'internal', 'key_mismatch', 'encryption_required', 'interrupted']);

const PUSH_PARALLEL = 8;
/** Batches per multi-session request while pushes keep coming. */
const PUSH_BATCHES_PER_REQUEST = 32;
/**
 * Sessions pushed at once when their batches share requests: three requests' worth, so while two requests are
 * answered the next one is read, checked and filled (client and server work at the same time, not in turns).
 */
const BATCHED_PUSH_PARALLEL = 3 * PUSH_BATCHES_PER_REQUEST;
/**
 * Sessions pulled at once when their pages share requests: half fill a request while the other half's is answered.
 * Half is the server's cap (LIMITS.maxSessionsPerPull): 1,000 new sessions cost about 16 requests, not 63.
 */
const BATCHED_PULL_PARALLEL = 128;

/** Of those, reading and checking their next batch at once (the others wait on requests or for a turn). */
const PUSH_READING = 16;

/** At most `limit` holders at once: each call waits for a turn and gets the function that gives it back (once). */
function turns(limit: number): () => Promise<() => void> {
  let free = limit;
  const waiting: (() => void)[] = [];
  return async () => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = waiting.shift();
      if (next) next();
      else free++;
    };
  };
}

/** Runs fn over items with at most `limit` at once; the first error stops new starts and is rethrown. */
async function inParallel<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== null) throw failed;
}

function sum<T>(xs: readonly T[], f: (x: T) => number): number {
  let n = 0;
  for (const x of xs) n += f(x);
  return n;
}
