// Where Claude Code's sessions are on this machine, and where sessync keeps its mirror of them.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { claudeCode } from '../../shared/agents/claude-code.js';
import { cacheKey, sessyncHome } from '../store/paths.js';

/** $CLAUDE_CONFIG_DIR/projects, else $HOME/.claude/projects. */
export function claudeProjectsRoot(env: NodeJS.ProcessEnv): string {
  return claudeCode.sessionsRoot(env, env.HOME && env.HOME.length > 0 ? env.HOME : homedir());
}

/**
 * The mirror: one file per Claude Code session in sessync's own layout, each line wrapped as an entry holding the exact
 * Claude Code line. The sync engine pushes and pulls these files like any other; Claude Code's files are only read,
 * and appended to.
 */
export function claudeMirrorRoot(env: NodeJS.ProcessEnv): string {
  return join(sessyncHome(env), 'agents', 'claude-code', 'sessions');
}

/** The mirror's own bookkeeping: which Claude Code folder each session lives in, and the files last read. */
export function claudeMirrorState(env: NodeJS.ProcessEnv): string {
  return join(sessyncHome(env), 'agents', 'claude-code', 'mirror.json');
}

/** Where the last read of one Claude Code file stopped (its offset and the identities so far), one small file each. */
export function claudeReadPoint(env: NodeJS.ProcessEnv, file: string): string {
  return join(sessyncHome(env), 'agents', 'claude-code', 'read', `${cacheKey(file)}.json`);
}
