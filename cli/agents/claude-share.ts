// Share and import of Claude Code sessions: one branch of the conversation as entries holding each line's value (so
// redaction reads every string), and an imported share written as a new Claude Code session file.
import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCode, claudeProjectFolder } from '../../shared/agents/claude-code.js';
import type { AgentLine } from '../../shared/agents/agent.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import type { SharePayload } from '../../shared/share-payload.js';
import { readSession } from '../store/session-reader.js';
import { resolveSession } from '../store/resolve.js';
import { claudeMirrorRoot, claudeProjectsRoot } from './claude-paths.js';
import { loadMirrorState } from './mirror-state.js';

export interface ShareSource {
  header: SessionHeader;
  branch: SessionEntry[];
  atId: string | null;
}

/** Root..`at` along the conversation (a compaction continues what it compacted); `at` defaults to the sync leaf. */
function branchOf(lines: readonly AgentLine[], at: string | undefined): AgentLine[] {
  const byId = new Map(lines.map((l) => [l.id, l]));
  let tip: AgentLine | undefined;
  if (at === undefined) {
    const leaf = claudeCode.syncLeaf(lines);
    tip = leaf === null ? undefined : byId.get(leaf);
  } else {
    const hits = lines.filter((l) => typeof l.value.uuid === 'string' && (l.value.uuid as string).startsWith(at));
    if (hits.length !== 1) throw new SessyncError(hits.length ? 'ambiguous' : 'not_found', `--at ${at} matches ${hits.length} lines of the session (give a uuid or a longer prefix)`);
    tip = hits[0];
  }
  const out: AgentLine[] = [];
  const seen = new Set<string>();
  for (let l = tip; l && !seen.has(l.id); l = l.parent === null ? undefined : byId.get(l.parent)) {
    seen.add(l.id);
    out.push(l);
  }
  return out.reverse();
}

/** The Claude Code session `ref` as a share source, or null when no mirrored Claude Code session matches it. */
export async function claudeShareSource(env: NodeJS.ProcessEnv, ref: string, cwd: string, realCwd: string, at: string | undefined): Promise<ShareSource | null> {
  let path: string;
  try {
    path = (await resolveSession(ref, { root: claudeMirrorRoot(env), realCwd, cwd })).path;
  } catch (e) {
    if (e instanceof SessyncError && e.code === 'not_found') return null;
    throw e;
  }
  const mirror = await readSession(path);
  const session = mirror.header.id;
  const where = (await loadMirrorState(env)).sessions[session];
  if (!where) throw new SessyncError('not_found', `Claude Code session ${session} has no file on this machine (deleted here? \`sessync restore ${session}\`)`);
  const rel = `${session}.jsonl`;
  const text = await readFile(join(where.folder, rel), 'utf8');
  const branch = branchOf(claudeCode.parseFile(text, { rel, kind: 'main' }).lines, at);
  const entries: SessionEntry[] = branch.map((l, i) => ({
    type: 'agent_line',
    agent: 'claude-code',
    id: l.id,
    parentId: i > 0 ? branch[i - 1]!.id : null,
    timestamp: l.timestamp ?? '',
    file: '',
    value: l.value,
  }));
  return { header: mirror.header, branch: entries, atId: branch.length ? branch[branch.length - 1]!.id : null };
}

/** Whether a share holds an agent's lines (a Claude Code session) rather than pi entries. */
export function isClaudeShare(payload: SharePayload): boolean {
  return payload.header.agent === 'claude-code';
}

/** Writes a shared Claude Code branch as a new session of `cwd` in Claude Code's folder: `claude --resume <id>` opens it. */
export async function writeClaudeImport(payload: SharePayload, env: NodeJS.ProcessEnv, cwd: string): Promise<{ id: string; path: string; entryCount: number }> {
  const lines: string[] = [];
  for (const e of payload.entries) {
    const back = claudeCode.fromEntry(e);
    if (!back || back.rel !== '') throw new SessyncError('corrupt', `the share's entry ${e.id} is not a Claude Code line; nothing was written`);
    lines.push(back.text);
  }
  const id = randomUUID();
  const folder = join(claudeProjectsRoot(env), claudeProjectFolder(cwd));
  await mkdir(folder, { recursive: true });
  const path = join(folder, `${id}.jsonl`);
  const fh = await open(path, 'wx', 0o600); // a new session: never over an existing file
  try {
    await fh.write(lines.map((l) => `${l}\n`).join(''));
    await fh.sync();
  } finally {
    await fh.close();
  }
  return { id, path, entryCount: lines.length };
}
