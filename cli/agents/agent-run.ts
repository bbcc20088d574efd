// Runs a sync command once per agent: pi's sessions as they are, Claude Code's through their mirror (read in before,
// written out after), so the engine, the wire and the server see sessions and never which agent wrote them.
import { realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AGENT_NAMES, type AgentName } from '../../shared/agents/agent.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { withFileLock } from '../store/file-lock.js';
import { listSessions } from '../store/session-index.js';
import { runSync, type RunOptions, type RunSummary } from '../sync/sync-run.js';
import { mergeOtherProjects } from '../sync/other-projects.js';
import { claudeMirrorRoot, claudeMirrorState, claudeProjectsRoot } from './claude-paths.js';
import { codexHome } from './codex-paths.js';
import { codexEnv, codexPaths, refreshCodex, runCodexSync } from './codex-run.js';
import { exportClaude } from './claude-export.js';
import { dropSetAside, importClaude } from './claude-import.js';
import { loadMirrorState, saveMirrorState } from './mirror-state.js';
import { piFolderProblem } from '../store/pi-folders.js';
import { mkdirPrivate } from '../store/private-fs.js';
import type { CommandContext, SessionsUse } from '../command.js';

export const AGENT_OPTION = { agent: { type: 'string' } } as const;

async function isDir(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/**
 * `--agent pi|claude-code|codex|all`, else $SESSYNC_AGENT (a standing choice, e.g. `pi` to leave Claude Code alone). Without
 * either: pi (sessync's own store) and every other agent whose folder exists here.
 */
export async function chosenAgents(option: unknown, env: NodeJS.ProcessEnv): Promise<AgentName[]> {
  const value = option ?? (env.SESSYNC_AGENT || undefined);
  // Claude Code's own folder ($CLAUDE_CONFIG_DIR or ~/.claude), not only projects/: a new machine gets its sessions too.
  if (value === undefined) {
    const found: AgentName[] = ['pi'];
    if (await isDir(dirname(claudeProjectsRoot(env)))) found.push('claude-code');
    if (await isDir(codexHome(env))) found.push('codex');
    return found;
  }
  if (value === 'all') return [...AGENT_NAMES];
  if (typeof value === 'string' && (AGENT_NAMES as readonly string[]).includes(value)) return [value as AgentName];
  const from = option === undefined ? 'SESSYNC_AGENT' : '--agent';
  throw new SessyncError('bad_input', `${from} must be one of ${[...AGENT_NAMES, 'all'].join(', ')} (got "${String(value)}")`);
}

/**
 * A Command.usesSessions for a command run per agent: only pi's run uses the folder --sessions-dir names (Claude
 * Code's and Codex's runs use their own mirrors), so `--agent claude-code` never looks at it.
 */
export function whenPi(use: SessionsUse): (ctx: CommandContext) => Promise<SessionsUse | null> {
  return async (ctx) => ((await chosenAgents(ctx.opts.agent, ctx.env)).includes('pi') ? use : null);
}

/** The environment the engine runs with for one agent: Claude Code's sessions root is its mirror. */
export function agentEnv(agent: AgentName, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (agent === 'codex') return codexEnv(env);
  return agent === 'pi' ? env : { ...env, SESSYNC_SESSIONS_DIR: claudeMirrorRoot(env) };
}

/** Runs fn holding the Claude Code mirror's lock: two sessync processes never mirror the same lines twice. */
async function withMirrorLock<T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  await mkdirPrivate(dirname(claudeMirrorState(env)));
  // A minute by default (a sync may hold it while it mirrors a large folder); SESSYNC_LOCK_TIMEOUT_MS, when set, as for every lock.
  return withFileLock(claudeMirrorState(env), fn, { timeoutMs: Number(env.SESSYNC_LOCK_TIMEOUT_MS) > 0 ? Number(env.SESSYNC_LOCK_TIMEOUT_MS) : 60_000 });
}

/**
 * Brings the mirror of an agent up to date with its own files (nothing to do for pi), under the mirror's lock. With
 * `projectCwd`, only that project's folder is read (a command about this project does not read every other one).
 */
export async function refreshMirror(agent: AgentName, env: NodeJS.ProcessEnv, note: (t: string) => void, projectCwd?: string): Promise<void> {
  if (agent === 'pi') return;
  if (agent === 'codex') return refreshCodex(env, note);
  const only = projectCwd === undefined ? undefined : new Set([claudeProjectFolder(await realpath(projectCwd).catch(() => projectCwd))]);
  await withMirrorLock(env, async () => {
    const state = await loadMirrorState(env);
    await importClaude(env, state, note, only);
    await saveMirrorState(env, state);
  });
}

/** Maps a session's path in the engine's view to the agent's own file: for Claude Code, its mirror to its session file. */
export async function agentPaths(agent: AgentName, env: NodeJS.ProcessEnv): Promise<(session: string, path: string) => string> {
  if (agent === 'pi') return (_session, path) => path;
  if (agent === 'codex') return codexPaths(env);
  const state = await loadMirrorState(env);
  return (session, path) => {
    const at = state.sessions[session];
    return at && at.mirror === path ? join(at.folder, `${session}.jsonl`) : path;
  };
}

/** The project a run is about, when it is about one project (no ref, no --all). */
export function projectScope(o: { ref?: string; all?: boolean; cwd: string }): string | undefined {
  return o.ref === undefined && !o.all ? o.cwd : undefined;
}

/** Restored sessions: the mirrors set aside when their files were deleted are folded into the restored ones. */
async function restoredAside(env: NodeJS.ProcessEnv, summary: RunSummary, note: (t: string) => void): Promise<void> {
  const state = await loadMirrorState(env);
  for (const s of summary.sessions) if (s.pulled?.created && s.path) await dropSetAside(env, state, s.session, s.path, note);
}

/** One run of the engine for one agent. */
export async function runAgentSync(agent: AgentName, o: RunOptions): Promise<RunSummary> {
  const note = o.note ?? (() => undefined);
  // pi's sessions sit in pi's folder and sessync's own store: the engine reads both (store/pi-folders.ts).
  if (agent === 'pi') {
    const problem = piFolderProblem(o.env);
    if (problem) note(problem);
    return runSync({ ...o, agent });
  }
  if (agent === 'codex') return runCodexSync(o);
  await refreshMirror(agent, o.env, note, projectScope(o));
  // What the engine says of a session names Claude Code's file, not the mirror; the mirror is never removed by it.
  const summary = await runSync({ ...o, env: agentEnv(agent, o.env), agent, mirrors: { agent, fileOf: await agentPaths(agent, o.env) } });
  if (o.restore) await withMirrorLock(o.env, async () => restoredAside(o.env, summary, note));
  const pulled = summary.sessions.filter((s) => s.pulled && (s.pulled.entries > 0 || s.pulled.created) && s.path).map((s) => s.path!);
  // Mirrors never written out (a run stopped between its pull and its export) go out now too.
  const known = await loadMirrorState(o.env);
  const unplaced = (await listSessions({ root: claudeMirrorRoot(o.env), all: true, env: o.env })).filter((l) => known.sessions[l.id] === undefined).map((l) => l.path);
  pulled.push(...unplaced);
  if (pulled.length > 0 || known.pendingExport.length > 0) {
    await withMirrorLock(o.env, async () => {
      const state = await loadMirrorState(o.env);
      const r = await exportClaude(o.env, state, pulled, note);
      // Each waits for a line Claude Code is writing (a file busy mid-line is the same wait).
      if (r.waiting.length > 0) summary.exportWaiting = r.waiting.map((session) => ({ agent, session, why: 'writing' as const }));
      await saveMirrorState(o.env, state);
      // What export appended (a pin among it) is mirrored now, so the next push carries it.
      if (r.lines > 0) await importClaude(o.env, state, note);
      await saveMirrorState(o.env, state);
    });
  }
  // Report where the session's own file is, not its mirror.
  const own = await agentPaths(agent, o.env);
  for (const s of summary.sessions) if (s.path) s.path = own(s.session, s.path);
  return summary;
}

/** Runs each chosen agent in turn and adds their figures up; `agents` keeps each one's own summary. */
export async function runAgents(agents: AgentName[], o: RunOptions): Promise<RunSummary & { agents?: Partial<Record<AgentName, RunSummary>> }> {
  if (agents.length === 1) return runAgentSync(agents[0]!, o);
  const each: Partial<Record<AgentName, RunSummary>> = {};
  let notFound: unknown;
  for (const a of agents) {
    try {
      each[a] = await runAgentSync(a, o);
    } catch (e) {
      // A ref names one agent's session: the others not knowing it is no failure, unless none does.
      if (o.ref === undefined || !isSessyncError(e, 'not_found')) throw e;
      notFound = e;
    }
  }
  const all = Object.values(each) as RunSummary[];
  if (all.length === 0) throw notFound;
  const add = (k: keyof RunSummary) => all.reduce((n, s) => n + (s[k] as number), 0);
  return {
    mode: o.mode,
    sessionsChecked: add('sessionsChecked'),
    pushedSessions: add('pushedSessions'),
    pushedEntries: add('pushedEntries'),
    pushedBytes: add('pushedBytes'),
    pulledSessions: add('pulledSessions'),
    pulledEntries: add('pulledEntries'),
    createdSessions: add('createdSessions'),
    conflicts: add('conflicts'),
    skippedLines: add('skippedLines'),
    failed: add('failed'),
    pushHeld: add('pushHeld'),
    damagedBatches: add('damagedBatches'),
    deleted: all.flatMap((s) => s.deleted),
    ...(all.some((s) => s.ignoredHeads) ? { ignoredHeads: all.flatMap((s) => s.ignoredHeads ?? []) } : {}),
    skippedFiles: all.flatMap((s) => s.skippedFiles),
    ...(all.some((s) => s.forks) ? { forks: all.flatMap((s) => s.forks ?? []) } : {}),
    ...(all.some((s) => s.exportWaiting) ? { exportWaiting: all.flatMap((s) => s.exportWaiting ?? []) } : {}),
    ...(all.some((s) => s.otherProjects) ? { otherProjects: mergeOtherProjects(all.map((s) => s.otherProjects))! } : {}),
    requests: add('requests'),
    sessions: all.flatMap((s) => s.sessions),
    agents: each,
  };
}
