// Where pi keeps its sessions on this machine: sessync syncs them there, so a pi user needs no --sessions-dir.
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { pi } from '../../shared/agents/pi.js';
import { piSessionDir } from './pi-session-dir.js';

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME.length > 0 ? env.HOME : homedir();
}

/** $PI_CODING_AGENT_DIR/sessions, else $HOME/.pi/agent/sessions (pi's own default). */
export function piSessionsRoot(env: NodeJS.ProcessEnv): string {
  return pi.sessionsRoot(env, home(env));
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw e;
  }
}

export interface PiFolder {
  root: string;
  /** pi's own sessionDir choice: sessions of every project sit directly in root, not in per-project folders. */
  flat: boolean;
  /** pi's settings file was unusable: said to the user, and pi's default folder is used (as pi does). */
  problem?: string;
}

/**
 * pi's sessions folder when pi is set up here, else null: its sessionDir choice ($PI_CODING_AGENT_SESSION_DIR, or
 * `sessionDir` in its settings) when that folder or pi's own folder exists, else `<pi's folder>/sessions` when pi's
 * folder ($PI_CODING_AGENT_DIR, else $HOME/.pi/agent) exists (pi makes it on its first run). Checked on every call,
 * not cached: a long-running watcher sees pi set up after it started.
 */
export function piFolderHere(env: NodeJS.ProcessEnv): PiFolder | null {
  // From the environment only, as pi finds it: an environment with neither variable (a program's own) names no pi.
  if (!env.PI_CODING_AGENT_DIR && !env.HOME && !env.PI_CODING_AGENT_SESSION_DIR) return null;
  const root = piSessionsRoot(env);
  const agentDir = dirname(root);
  const chosen = piSessionDir(env, agentDir, home(env));
  const setUp = isDir(agentDir);
  if (chosen.dir && (setUp || isDir(chosen.dir))) return { root: chosen.dir, flat: true };
  if (!setUp) return null;
  return { root, flat: false, ...(chosen.problem ? { problem: chosen.problem } : {}) };
}

/** pi's sessions folder when pi is set up here, else null (see piFolderHere). */
export function piSessionsHere(env: NodeJS.ProcessEnv): string | null {
  return piFolderHere(env)?.root ?? null;
}
