// `sessync status` data: per session, entries not yet pushed (read from the local tail only) and batches waiting on the server.
import { open } from 'node:fs/promises';
import { isSessyncError } from '../../shared/errors.js';
import { diffSessions, type LocalStatus } from '../../shared/sync-plan.js';
import type { Head } from '../../shared/wire.js';
import { realCwd as toRealCwd } from '../store/paths.js';
import { listSessions, type SessionSummary } from '../store/session-index.js';
import { resolveSession } from '../store/resolve.js';
import { piLayout } from '../store/pi-folders.js';
import { loadLogin } from '../login-store.js';
import { ApiClient, isUnreachable, reportRetries, type WaitReport } from '../api-client.js';
import { openSync } from './sync-run.js';
import { projectKeysHere } from './project-scope.js';
import { remoteAgents, remoteProjectKeys } from './remote-keys.js';
import { droppedSessions } from './dropped.js';
import { restoreBatchCount } from './restore-plan.js';
import type { BadBatchRecord, SessionSyncState } from './session-sync-state.js';
import { idsToPullAgain } from './pull.js';

export interface StatusRow {
  session: string;
  path?: string;
  name?: string;
  /**
   * Entries after the pushed offset, pulled ones excluded. Null when not logged in: what is pushed is recorded per
   * server, and without a login no server is known, so nothing is claimed either way.
   */
  unpushedEntries: number | null;
  unpushedBytes: number | null;
  pendingBatch: boolean;
  /** Batches on the server this file lacks, per other host; null when the server could not be asked. */
  waitingBatches: number | null;
  /** The session exists only on the server. */
  remoteOnly: boolean;
  /** Never pushed nor pulled here: the next push announces it (even one with only a header). Absent when not logged in. */
  notOnServer?: boolean;
  /** The server holds fewer of this machine's batches than the state says it acknowledged: the next sync pushes it again. */
  serverBehind?: boolean;
  /** Whose session it is (pi, claude-code). */
  agent?: string;
  /** Synced here once, then deleted here: the server keeps it, sync leaves it deleted, `sessync restore` brings it back. */
  deletedHere?: boolean;
  /** Deleted here: the batches on the server that `sessync restore` would fetch (its waitingBatches is 0). */
  restoreBatches?: number;
  /** Deleted on the server (its tombstone seen by a sync): kept here, not pushed. */
  deletedOnServer?: { at: string; host: string };
  /** Damaged stored batches (or lines of them) pulls passed over, as the sync state records them (newest last). */
  damaged?: BadBatchRecord[];
  /**
   * A pull of it was cut short (its note `pulling`): the entries from byte `from` on may be ones it wrote, the server's,
   * with no record of them, or written here since. `unchecked`: how many of them are not told apart yet (the server
   * not asked), counted nowhere; 0 once the server's ids told them apart, this machine's then in unpushedEntries.
   * Absent when nothing follows that byte.
   */
  interruptedPull?: { from: number; unchecked: number };
}

export interface StatusReport {
  /** The agent whose sessions this report is about, when the caller named one (a report per agent). */
  agent?: string;
  /** `status` over several agents: each one's figures (the report's rows are all of theirs, and name no agent). */
  agents?: Record<string, { sessions: number; toPush: number; toPull: number; serverChecked: boolean; serverError?: StatusReport['serverError'] }>;
  server: string | null;
  /** A login is saved. False: the server was not asked and nothing is said of what is pushed (rows' unpushed null). */
  loggedIn: boolean;
  /** The server answered with its heads: waitingBatches are known. False when not logged in or not reachable. */
  serverChecked: boolean;
  /** Why the server part is missing (not logged in, unreachable). */
  serverError?: { code: string; message: string };
  sessions: StatusRow[];
  /** Session files not looked at because their header is unreadable. */
  skippedFiles: { path: string; reason: string }[];
  /** Heads the server listed with names no sessync server accepts (the first 20): never synced. */
  ignoredHeads?: Head[];
}

/** Counts complete entry lines after `from`, skipping the header and ids a pull appended. */
async function countTail(path: string, from: number, size: number, skip: ReadonlySet<string>): Promise<number> {
  if (size <= from) return 0;
  const fh = await open(path, 'r');
  try {
    let n = 0;
    let pos = from;
    let carry = '';
    const buf = Buffer.alloc(1 << 20);
    while (pos < size) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
      if (bytesRead === 0) break;
      const lines = (carry + buf.toString('utf8', 0, bytesRead)).split('\n');
      carry = lines.pop()!;
      for (const l of lines) {
        if (!l.trim() || (pos === from && from === 0 && n === 0 && l.startsWith('{"type":"session"'))) continue;
        if (skip.size) {
          const m = /"id":"([^"]+)"/.exec(l);
          if (m && skip.has(m[1]!)) continue;
        }
        n++;
      }
      pos += bytesRead;
    }
    return n;
  } finally {
    await fh.close();
  }
}

export interface StatusOptions {
  ref?: string;
  all?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  root: string;
  /** --map KEY=PATH given now: sessions of those projects count as this folder's. */
  maps?: Record<string, string>;
  /** Called with the local figures before the server is asked (they never wait on the network). */
  onLocal?: (report: StatusReport) => void;
  /** Retries: what the server part waits for. */
  wait?: WaitReport;
  /** Sessions only the server has are shown when their meta names this agent (none: pi), as sync pulls them. */
  agent?: string;
  /** Shared by the reports of one `status` run (one per agent): a server found unreachable is not asked again. */
  reach?: ServerReach;
}

/** What one `status` run learnt of reaching the server: unreachable once is the answer for the rest of the run. */
export interface ServerReach {
  unreachable?: { url: string };
}

/** The server part of a report whose run found the server unreachable before (its first report says why). */
const NOT_ASKED_AGAIN = 'not asked again: the server could not be reached earlier in this run';

export async function syncStatus(o: StatusOptions): Promise<StatusReport> {
  let locals: SessionSummary[];
  const skippedFiles: { path: string; reason: string }[] = [];
  let rc: string | undefined;
  const layout = piLayout(o.env);
  if (o.ref) locals = [await resolveSession(o.ref, { root: o.root, realCwd: await toRealCwd(o.cwd).catch(() => o.cwd), cwd: o.cwd, ...layout })];
  else if (o.all) locals = await listSessions({ root: o.root, all: true, skipped: skippedFiles, ...layout });
  else locals = await listSessions({ root: o.root, realCwd: (rc = await toRealCwd(o.cwd)), skipped: skippedFiles, ...layout });

  const login = await loadLogin(o.env);
  // Nothing listening is the answer at once (no retry within a second, as push and pull make): status is offline-first,
  // its local half is already out. A server that answers and fails still gets the client's usual retries.
  const wait = o.wait;
  const api = login ? ApiClient.forLogin(login, { unreachableRetryMs: 0, ...(wait ? { onRetry: reportRetries(wait) } : {}) }) : undefined;
  const ctx = await openSync(o.env, api ? { api } : {}).catch((e) => {
    if (isSessyncError(e, 'unauthorized')) return null;
    throw e;
  });
  const report: StatusReport = { ...(o.agent !== undefined ? { agent: o.agent } : {}), server: login?.url ?? null, loggedIn: ctx !== null, serverChecked: false, sessions: [], skippedFiles };
  const states = ctx ? await ctx.state.all() : new Map();
  // Local figures first: they come from the files and the state beside them, never from the server.
  for (const l of locals) {
    const st = states.get(l.id);
    // A killed pull's bytes (from `pulling.from` on) may be the server's: told apart below, with the server's ids.
    const cut = st?.pulling ? Math.min(l.size, Math.max(st.pulling.from, st.pushedOffset)) : l.size;
    const skip = new Set<string>(st?.skipIds ?? []);
    const row: StatusRow = {
      session: l.id,
      path: l.path,
      unpushedEntries: ctx ? await countTail(l.path, st?.pushedOffset ?? 0, cut, skip) : null,
      unpushedBytes: ctx ? Math.max(0, l.size - (st?.pushedOffset ?? 0)) : null,
      pendingBatch: Boolean(st?.pending),
      waitingBatches: null,
      remoteOnly: false,
    };
    if (l.name) row.name = l.name;
    if (st?.deleted) row.deletedOnServer = st.deleted;
    else if (ctx && !st?.metaSent) row.notOnServer = true;
    if (st?.badBatches?.length) row.damaged = st.badBatches;
    const after = ctx && st?.pulling ? await countTail(l.path, cut, l.size, skip) : 0;
    if (after > 0) row.interruptedPull = { from: cut, unchecked: after };
    report.sessions.push(row);
  }
  if (!ctx) report.serverError = { code: 'unauthorized', message: 'not logged in: run `sessync login <url> --token <token>`' };
  o.onLocal?.(report);
  if (!ctx) return report;

  if (o.reach?.unreachable?.url === ctx.api.url) {
    report.serverError = { code: 'unavailable', message: NOT_ASKED_AGAIN };
    return report;
  }
  let heads: Head[];
  try {
    heads = await ctx.api.allHeads();
    if (ctx.api.ignoredHeads.length) report.ignoredHeads = ctx.api.ignoredHeads.slice(0, 20);
  } catch (e) {
    if (!isSessyncError(e)) throw e;
    report.serverError = { code: e.code, message: e.message }; // the local figures stand
    // Only a server that never answered is not asked again: one that answered 503 or dropped a reply may answer the
    // next agent's request, and "could not be reached" would be false of it.
    if (o.reach && isSessyncError(e, 'unavailable') && isUnreachable(e)) o.reach.unreachable = { url: ctx.api.url };
    return report;
  }
  report.serverChecked = true;
  await tellInterruptedApart(ctx, report, locals, states);
  const status: LocalStatus[] = locals.map((l) => {
    const st = states.get(l.id);
    return { session: l.id, size: l.size, pushedOffset: st?.pushedOffset ?? 0, pendingSeq: st?.pending?.seq ?? null, cursor: st?.cursor ?? {}, nextSeq: st?.nextSeq ?? 1 };
  });
  const diffs = diffSessions(status, heads, ctx.hostId);
  const rows = new Map(report.sessions.map((r) => [r.session, r]));
  // This project's sessions that only the server has (matched by project key, as sync does); --all lists every one.
  const mine = new Set<string>();
  if (rc !== undefined) {
    const remoteOnly = diffs.filter((d) => !d.local).map((d) => d.session);
    try {
      const keys = await projectKeysHere(ctx, rc, o.maps ?? {});
      for (const [s, k] of await remoteProjectKeys(ctx, remoteOnly, heads)) if (keys.has(k)) mine.add(s);
    } catch (e) {
      if (!isSessyncError(e)) throw e;
      report.serverError = { code: e.code, message: e.message };
    }
  }
  let agentOf: Map<string, string> | null = null;
  if (o.agent !== undefined) {
    try {
      agentOf = await remoteAgents(ctx, diffs.filter((d) => !d.local && (o.all || mine.has(d.session))).map((d) => d.session), heads);
    } catch (e) {
      if (!isSessyncError(e)) throw e;
      report.serverError ??= { code: e.code, message: e.message };
    }
  }
  const dropped = await droppedSessions(states, new Set(rows.keys()), heads, ctx.hostId);
  for (const d of diffs) {
    const known = rows.get(d.session);
    if (known) {
      known.waitingBatches = d.waitingBatches;
      if (d.serverBehind && !known.deletedOnServer) known.serverBehind = true;
      continue;
    }
    if (o.ref || (!o.all && !mine.has(d.session))) continue;
    if (agentOf && agentOf.get(d.session) !== o.agent) continue;
    const row: StatusRow = { session: d.session, unpushedEntries: 0, unpushedBytes: 0, pendingBatch: false, waitingBatches: d.waitingBatches, remoteOnly: true };
    // Deleted here: sync pulls none of it, so nothing waits; what `restore` would fetch (its own batches too) is said apart.
    if (dropped.has(d.session)) Object.assign(row, { deletedHere: true, waitingBatches: 0, restoreBatches: restoreBatchCount(heads, d.session) });
    report.sessions.push(row);
  }
  return report;
}

/**
 * Rows with entries after a killed pull's start not told apart: the entries the server holds (what a pull again
 * brings) are the server's, the others were written here since and are counted as to push. A session the server
 * cannot answer for keeps its figure unchecked, and the report says why.
 */
async function tellInterruptedApart(ctx: Awaited<ReturnType<typeof openSync>>, report: StatusReport, locals: readonly SessionSummary[], states: ReadonlyMap<string, SessionSyncState>): Promise<void> {
  const paths = new Map(locals.map((l) => [l.id, l]));
  for (const row of report.sessions) {
    const st = states.get(row.session);
    const l = paths.get(row.session);
    if (!row.interruptedPull?.unchecked || !st || !l || row.unpushedEntries === null) continue;
    try {
      const server = await idsToPullAgain(ctx, st);
      const mine = await countTail(l.path, row.interruptedPull.from, l.size, new Set([...st.skipIds, ...server]));
      row.unpushedEntries += mine;
      row.interruptedPull.unchecked = 0;
    } catch (e) {
      if (!isSessyncError(e)) throw e;
      report.serverError ??= { code: e.code, message: `session ${row.session}: ${e.message}` };
    }
  }
}
