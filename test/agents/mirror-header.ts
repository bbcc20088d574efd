// The header of sessync's mirror of another agent's session (its first line): read, or rewritten by hand as a hostile
// server or share could send it, before the session is pushed.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function mirrorOf(home: string, agent: 'claude-code' | 'codex', session: string): string {
  const state = JSON.parse(readFileSync(join(home, 'agents', agent, 'mirror.json'), 'utf8'));
  return state.sessions[session].mirror as string;
}

export function mirrorHeader(home: string, agent: 'claude-code' | 'codex', session: string): Record<string, unknown> {
  return JSON.parse(readFileSync(mirrorOf(home, agent, session), 'utf8').split('\n')[0]!);
}

/** Rewrites the header of a session's mirror with `extra` fields. */
export function editMirrorHeader(home: string, agent: 'claude-code' | 'codex', session: string, extra: Record<string, unknown>): void {
  const mirror = mirrorOf(home, agent, session);
  const [first, ...rest] = readFileSync(mirror, 'utf8').split('\n');
  writeFileSync(mirror, [JSON.stringify({ ...JSON.parse(first!), ...extra }), ...rest].join('\n'));
}
