// One sync run for Codex: rollouts read into their mirror, the engine run on the mirror, pulled lines written out to
// rollouts (forks made where two machines continued one session), all under the Codex mirror's lock.
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { withFileLock } from '../store/file-lock.js';
import { mkdirPrivate } from '../store/private-fs.js';
import { listSessions } from '../store/session-index.js';
import { openSync, runSync, type RunOptions, type RunSummary } from '../sync/sync-run.js';
import type { SyncContext } from '../sync/sync-context.js';
import { serverArrivals } from './codex-arrivals.js';
import { exportCodexMirror } from './codex-mirror-export.js';
import { importCodexMirror } from './codex-mirror-import.js';
import { codexMirrorRoot, codexMirrorState } from './codex-paths.js';
import { loadCodexState, saveCodexState } from './codex-state.js';

/** The environment the engine runs with for Codex: its sessions root is the mirror. */
export function codexEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, SESSYNC_SESSIONS_DIR: codexMirrorRoot(env) };
}

/** Runs fn holding the Codex sync lock: two sessync processes never mirror, or move, one rollout at once. */
export async function withCodexLock<T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  await mkdirPrivate(dirname(codexMirrorState(env)));
  return withFileLock(codexMirrorState(env), fn, { timeoutMs: 60_000 });
}

/** Brings the mirror up to date with this machine's rollouts. */
export async function refreshCodex(env: NodeJS.ProcessEnv, note: (t: string) => void): Promise<void> {
  await withCodexLock(env, async () => {
    const state = await loadCodexState(env);
    await importCodexMirror(env, state, note);
    await saveCodexState(env, state);
  });
}

/** Maps a mirror path to its rollout. */
export async function codexPaths(env: NodeJS.ProcessEnv): Promise<(session: string, path: string) => string> {
  const state = await loadCodexState(env);
  return (session, path) => {
    const at = state.sessions[session];
    return at && at.mirror === path ? at.rollout : path;
  };
}

export async function runCodexSync(o: RunOptions): Promise<RunSummary> {
  const note = o.note ?? (() => undefined);
  await refreshCodex(o.env, note);
  // What the engine says of a session names its rollout, not the mirror; the mirror is never removed by it.
  const summary = await runSync({ ...o, env: codexEnv(o.env), agent: 'codex', mirrors: { agent: 'codex', fileOf: await codexPaths(o.env) } });
  const pulled = summary.sessions.filter((s) => s.pulled && (s.pulled.entries > 0 || s.pulled.created) && s.path).map((s) => s.path!);
  await withCodexLock(o.env, async () => {
    const state = await loadCodexState(o.env);
    // Mirrors never written out (a run stopped between its pull and its export) go out now too.
    // So do mirrors that changed since they were last written out (a run killed between its pull and its export).
    const mirrors = await listSessions({ root: codexMirrorRoot(o.env), all: true, env: o.env });
    const unplaced = mirrors.filter((l) => state.sessions[l.id] === undefined).map((l) => l.path);
    const changed: string[] = [];
    for (const l of mirrors) {
      const was = state.exported[l.path];
      const st = await stat(l.path).catch(() => null);
      if (st && (was?.size !== st.size || was.mtimeMs !== st.mtimeMs)) changed.push(l.path);
    }
    // The server's order of continuations, asked only for a session that has some to order.
    let sync: Promise<SyncContext> | undefined;
    const ask = async (session: string) => serverArrivals(await (sync ??= openSync(codexEnv(o.env), { note, ...(o.api ? { api: o.api } : {}) })), session);
    const r = await exportCodexMirror(o.env, state, [...pulled, ...unplaced, ...changed], note, ask);
    // Every line of the rollouts here is on the server once the run pushed without failure: what this machine saw reach
    // it first, which decides a fork only against a server that does not say when it received each batch.
    // Not for a session whose write-out waits (Codex holds it, or is mid-line): its continuation did not win by waiting.
    if (summary.failed === 0) {
      const waiting = new Set(state.pending);
      for (const [session, last] of Object.entries(state.lastLocal)) if (!waiting.has(state.sessions[session]?.mirror ?? '')) state.synced[session] = last;
    }
    await saveCodexState(o.env, state);
    // Forks just made are mirrored now, so the next push carries them.
    if (r.forks.length > 0) await importCodexMirror(o.env, state, note);
    await saveCodexState(o.env, state);
    if (r.forks.length > 0) summary.forks = r.forks;
    if (r.waiting.length > 0) summary.exportWaiting = r.waiting.map((w) => ({ agent: 'codex', ...w }));
  });
  const own = await codexPaths(o.env);
  for (const s of summary.sessions) if (s.path) s.path = own(s.session, s.path);
  return summary;
}
