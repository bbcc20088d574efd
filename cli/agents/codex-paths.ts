// Where Codex keeps rollouts and its index on this machine, and where sessync keeps its mirror of them.
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { codex } from '../../shared/agents/codex.js';
import { sessyncHome } from '../store/paths.js';

/** $CODEX_HOME/sessions, else $HOME/.codex/sessions. */
export function codexSessionsRoot(env: NodeJS.ProcessEnv): string {
  return codex.sessionsRoot(env, env.HOME && env.HOME.length > 0 ? env.HOME : homedir());
}

/** Codex's own folder ($CODEX_HOME or ~/.codex). */
export function codexHome(env: NodeJS.ProcessEnv): string {
  return dirname(codexSessionsRoot(env));
}

/** Codex's index of threads (table `threads`, absolute `rollout_path`). */
export function codexIndexPath(env: NodeJS.ProcessEnv): string {
  return join(codexHome(env), 'state_5.sqlite');
}

/** The mirror: one sessync session file per rollout, each line an entry holding the exact rollout line. */
export function codexMirrorRoot(env: NodeJS.ProcessEnv): string {
  return join(sessyncHome(env), 'agents', 'codex', 'sessions');
}

/** The mirror's bookkeeping (also the file the Codex sync lock is taken on). */
export function codexMirrorState(env: NodeJS.ProcessEnv): string {
  return join(sessyncHome(env), 'agents', 'codex', 'mirror.json');
}
