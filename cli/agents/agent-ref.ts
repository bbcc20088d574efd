// A session <ref> over every agent's sessions that `list` shows (pi's, and the Claude Code and Codex mirrors), with one
// rule for all: the full id, a prefix of it, or a prefix of the short form list prints.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { CommandContext } from '../command.js';
import { AGENTS } from '../../shared/agents/index.js';
import type { AgentLine, AgentName } from '../../shared/agents/agent.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { idMatches, shortId } from '../format/short-id.js';
import { locate, sessionOf } from '../store/locate.js';
import { sessionsRoot } from '../store/paths.js';
import { looksLikePath, resolveSession } from '../store/resolve.js';
import { listSessions, type SessionSummary } from '../store/session-index.js';
import { agentEnv, agentPaths, chosenAgents, refreshMirror } from './agent-run.js';
import { anyClaudeSession } from './claude-files.js';
import { claudeMirrorRoot, claudeProjectsRoot } from './claude-paths.js';

export interface AgentSession {
  agent: AgentName;
  session: SessionSummary;
  /** The agent's own main file (for pi, the session file itself). */
  file: string;
}

/**
 * Whether bringing the agent's mirror up to date could change what `ref` finds in it: a Claude Code session's id is its
 * file's name, so when neither a file name nor a mirrored session matches, the refresh (whose first run reads every
 * file) would find nothing for the ref either. Codex names a session by its first line (the file name only stands in
 * when that has none): its mirror is always refreshed.
 */
async function mayMatch(agent: AgentName, env: NodeJS.ProcessEnv, ref: string): Promise<boolean> {
  if (agent !== 'claude-code') return true;
  const matches = (id: string) => idMatches(id, ref);
  // A mirrored session whose file went: the refresh sets it aside, so it must run.
  if ((await listSessions({ root: claudeMirrorRoot(env), all: true, env })).some((r) => matches(r.id))) return true;
  return anyClaudeSession(claudeProjectsRoot(env), matches);
}

/**
 * The one session `ref` names among the chosen agents' sessions (each agent's: this project first, then all). A ref
 * matching sessions of several agents is ambiguous, and the error lists them all; a path is a pi session file.
 */
export async function agentSessionOf(ctx: CommandContext, ref: string, o: { agents?: readonly AgentName[] } = {}): Promise<AgentSession> {
  if (looksLikePath(ref)) {
    const { session } = await sessionOf(ctx, ref);
    return { agent: 'pi', session, file: session.path };
  }
  const place = await locate(ctx);
  const hits: AgentSession[] = [];
  /** Sessions of an agent whose own lookup was ambiguous: listed with the others. */
  const several: { agent: AgentName; id: string; path: string; cwd: string }[] = [];
  let notFound: unknown;
  for (const agent of o.agents ?? (await presentAgents(ctx.env))) {
    let session: SessionSummary;
    try {
      if (agent === 'pi') session = await resolveSession(ref, place);
      else {
        // The mirror must know sessions the agent wrote since the last sync, as `list` does before it lists them. One
        // that cannot be brought up to date now (its lock held by a sync, a file unreadable) is searched as it is, with
        // a note: a ref of another agent's session must not fail on it.
        try {
          if (await mayMatch(agent, ctx.env, ref)) await refreshMirror(agent, ctx.env, (t) => ctx.info(t));
        } catch (e) {
          if (!isSessyncError(e)) throw e;
          ctx.info(`note: ${agent}'s sessions were not brought up to date before looking for "${ref}" (${e.message}); sessions it wrote since the last sync may be missed`);
        }
        session = await resolveSession(ref, { root: sessionsRoot(agentEnv(agent, ctx.env)), realCwd: place.realCwd, cwd: ctx.cwd, env: ctx.env });
      }
    } catch (e) {
      if (isSessyncError(e, 'ambiguous')) {
        const own = await agentPaths(agent, ctx.env);
        for (const c of (e.details as { candidates?: { id: string; path: string; cwd: string }[] } | undefined)?.candidates ?? []) several.push({ agent, id: c.id, path: own(c.id, c.path), cwd: c.cwd });
        continue;
      }
      if (!isSessyncError(e, 'not_found')) throw e;
      notFound ??= e;
      continue;
    }
    const hit = { agent, session, file: (await agentPaths(agent, ctx.env))(session.id, session.path) };
    // A whole id names one session whatever the other agents hold: their mirrors are not refreshed for it (a first
    // refresh reads every one of their files), so `resume <id>` of a pi session costs what it did before.
    if (session.id === ref) return hit;
    hits.push(hit);
  }
  if (hits.length === 1 && several.length === 0) return hits[0]!;
  if (hits.length === 0 && several.length === 0) throw notFound ?? new SessyncError('not_found', `no session matches "${ref}". Run \`sessync list --all --agent all\`.`);
  const all = [...hits.map((h) => ({ agent: h.agent, id: h.session.id, path: h.file, cwd: h.session.cwd })), ...several];
  const shown = all.slice(0, 20).map((c) => `  ${shortId(c.id)}  ${c.id}  (${c.agent})  ${c.cwd}  ${c.path}`);
  const more = all.length > shown.length ? [`  ... and ${all.length - shown.length} more`] : [];
  throw new SessyncError('ambiguous', [`session "${ref}" is ambiguous; it matches ${all.length}:`, ...shown, ...more, 'Give more characters.'].join('\n'), {
    details: { candidates: all },
  });
}

/**
 * Every agent whose sessions are on this machine, whatever SESSYNC_AGENT says: a command without --agent (log,
 * resume, rm) finds a session by its ref wherever it is, as before other agents' refs resolved (SESSYNC_AGENT=claude-code
 * made `log <pi id>` fail).
 */
async function presentAgents(env: NodeJS.ProcessEnv): Promise<AgentName[]> {
  const { SESSYNC_AGENT: _, ...rest } = env;
  return chosenAgents(undefined, rest);
}

/** The command that continues another agent's session `id` (sessync opens only pi's itself). */
export function agentResumeCommand(agent: Exclude<AgentName, 'pi'>, id: string): string {
  return agent === 'codex' ? `codex resume ${id}` : `claude --resume ${id}`;
}

/** The lines of another agent's session along its own leaf rule (Codex's: its file order), root to leaf, read from the agent's own main file. */
export async function agentBranch(s: AgentSession): Promise<AgentLine[]> {
  const adapter = AGENTS[s.agent];
  const rel = basename(s.file);
  const { lines } = adapter.parseFile(await readFile(s.file, 'utf8'), { rel, kind: 'main' });
  const byId = new Map(lines.map((l) => [l.id, l]));
  const leaf = adapter.leaf(lines);
  const out: AgentLine[] = [];
  const seen = new Set<string>();
  for (let l = leaf === null ? undefined : byId.get(leaf); l && !seen.has(l.id); l = l.parent === null ? undefined : byId.get(l.parent)) {
    seen.add(l.id);
    out.push(l);
  }
  return out.reverse();
}
