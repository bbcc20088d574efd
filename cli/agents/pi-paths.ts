// Where pi keeps its sessions on this machine: sessync syncs them there, so a pi user needs no --sessions-dir.
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { pi } from '../../shared/agents/pi.js';

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME.length > 0 ? env.HOME : homedir();
}

/** $PI_CODING_AGENT_DIR/sessions, else $HOME/.pi/agent/sessions (pi's own rule). */
export function piSessionsRoot(env: NodeJS.ProcessEnv): string {
  return pi.sessionsRoot(env, home(env));
}

/**
 * pi's sessions folder when pi's own folder ($PI_CODING_AGENT_DIR, else $HOME/.pi/agent) exists (pi makes it on its
 * first run), else null. Checked on every call, not cached: a long-running watcher sees pi set up after it started.
 */
export function piSessionsHere(env: NodeJS.ProcessEnv): string | null {
  // From the environment only, as pi finds it: an environment with neither variable (a program's own) names no pi.
  if (!env.PI_CODING_AGENT_DIR && !env.HOME) return null;
  const root = piSessionsRoot(env);
  try {
    return statSync(dirname(root)).isDirectory() ? root : null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

