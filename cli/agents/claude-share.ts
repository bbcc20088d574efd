// Share and import of Claude Code sessions: one branch of the conversation as entries holding each line's value (so
// redaction reads every string), and an imported share written as a new Claude Code session file.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_FILE_RE, claudeCode, claudeProjectFolder } from '../../shared/agents/claude-code.js';
import type { AgentLine } from '../../shared/agents/agent.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import type { SharePayload } from '../../shared/share-payload.js';
import { readSession } from '../store/session-reader.js';
import { writeNewFiles } from '../store/write-new-files.js';
import { resolveSession } from '../store/resolve.js';
import { placeInProject } from '../sync/project-key.js';
import { claudeMirrorRoot, claudeProjectsRoot } from './claude-paths.js';
import { loadMirrorState } from './mirror-state.js';
import { folderSessions } from './claude-files.js';

export interface ShareSource {
  header: SessionHeader;
  branch: SessionEntry[];
  atId: string | null;
  /** What of the session was left out and why (unreadable lines): said to the user, in --json output too. */
  notes?: string[];
}

/**
 * What a share says of a file it read: lines that are not JSON, and a last line with no newline yet (the agent may be
 * writing it). Both are left out, never blocking the share and never written to: the file stays the agent's.
 */
export function leftOutNotes(path: string, agent: string, parsed: { problems: readonly { line: number }[]; tail: string }): string[] {
  const bad = parsed.problems.map((p) => p.line);
  const notes: string[] = [];
  if (bad.length) notes.push(`${bad.length} line(s) of ${path} are not JSON and are not part of the share (line ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', ...' : ''})`);
  if (parsed.tail.trim() !== '') notes.push(`the last line of ${path} has no newline yet (${agent} may be writing it): it is not part of the share`);
  return notes;
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
    path = (await resolveSession(ref, { root: claudeMirrorRoot(env), realCwd, cwd, env })).path;
  } catch (e) {
    if (e instanceof SessyncError && e.code === 'not_found') return null;
    throw e;
  }
  const mirror = await readSession(path);
  const session = mirror.header.id;
  const where = (await loadMirrorState(env)).sessions[session];
  if (!where) throw new SessyncError('not_found', `Claude Code session ${session} has no file on this machine (deleted here? \`sessync restore ${session}\`)`);
  const rel = `${session}.jsonl`;
  const mainFile = claudeCode.parseFile(await readFile(join(where.folder, rel), 'utf8'), { rel, kind: 'main' });
  const lines = mainFile.lines;
  const notes = leftOutNotes(join(where.folder, rel), 'Claude Code', mainFile);
  const branch = branchOf(lines, at);
  const on = new Set(branch.map((l) => l.id));
  const upTo = branch.length ? lines.indexOf(branch[branch.length - 1]!) : -1;
  // Subagents go with the branch (the viewer shows them collapsed): lines inline in the file (1.0.x) where they are,
  // up to the shared line; their own files after the conversation: agent-*.jsonl beside the session naming it (2.0.x),
  // and those under <session>/subagents (2.1.x).
  const picked: { line: AgentLine; file: string }[] = lines.filter((l, i) => on.has(l.id) || (l.value.isSidechain === true && i <= upTo)).map((line) => ({ line, file: '' }));
  const found = (await folderSessions(where.folder, () => undefined)).find((f) => f.session === session);
  for (const sub of found?.files.filter((f) => f.kind === 'subagent') ?? []) {
    const subFile = claudeCode.parseFile(await readFile(join(where.folder, sub.rel), 'utf8'), sub);
    notes.push(...leftOutNotes(join(where.folder, sub.rel), 'Claude Code', subFile));
    for (const line of subFile.lines) picked.push({ line, file: sub.rel });
  }
  const entries: SessionEntry[] = picked.map(({ line, file }, i) => ({
    type: 'agent_line',
    agent: 'claude-code',
    id: line.id,
    parentId: i > 0 ? picked[i - 1]!.line.id : null,
    timestamp: line.timestamp ?? '',
    file,
    value: line.value,
  }));
  return { header: mirror.header, branch: entries, atId: branch.length ? branch[branch.length - 1]!.id : null, ...(notes.length ? { notes } : {}) };
}

/** Whether a share holds an agent's lines (a Claude Code session) rather than pi entries. */
export function isClaudeShare(payload: SharePayload): boolean {
  return payload.header.agent === 'claude-code';
}

/**
 * A shared line as Claude Code would have written it in the new session: its `cwd` is the importing project's path (the
 * share's is the sharer's, redacted to `~/...`, which would file the session under a project of that name), and a
 * `sessionId` naming the shared session names the new one. Other fields keep their order and values.
 */
function asImported(text: string, shared: string, id: string, cwd: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text; // not JSON (no field to set): it is written as the share holds it, like any other line
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return text;
  const v = value as Record<string, unknown>;
  if (typeof v.cwd !== 'string' && v.sessionId !== shared) return text;
  if (typeof v.cwd === 'string') v.cwd = cwd;
  if (v.sessionId === shared) v.sessionId = id;
  return JSON.stringify(v);
}

/**
 * Writes a shared Claude Code branch as a new session of `project` in Claude Code's folder: `claude --resume <id>` opens
 * it. A session shared from a subfolder of its repository (the header's cwdInProject) lands in that subfolder here.
 */
export async function writeClaudeImport(payload: SharePayload, env: NodeJS.ProcessEnv, project: string): Promise<{ id: string; path: string; entryCount: number }> {
  const cwd = await placeInProject(project, payload.header.cwdInProject);
  const id = randomUUID();
  const from = `${payload.header.id}/subagents/`;
  const files = new Map<string, string[]>();
  for (const e of payload.entries) {
    const back = claudeCode.fromEntry(e);
    // The main file, and subagent files re-homed under the new session (a 2.0.x one beside the session goes where
    // today's Claude Code keeps them: its lines name the shared session, which the new one's folder does not need).
    const sub = back === null || back.whole ? null : back.rel.startsWith(from) ? back.rel.slice(from.length) : AGENT_FILE_RE.test(back.rel) ? back.rel : null;
    const rel = back === null ? null : back.rel === '' ? `${id}.jsonl` : sub !== null ? `${id}/subagents/${sub}` : null;
    if (back === null || rel === null) throw new SessyncError('corrupt', `the share's entry ${e.id} is not a line of a Claude Code session or its subagents; nothing was written`);
    let list = files.get(rel);
    if (!list) files.set(rel, (list = []));
    list.push(back.whole === true ? back.text : asImported(back.text, payload.header.id, id, cwd));
  }
  const folder = join(claudeProjectsRoot(env), claudeProjectFolder(cwd));
  const main = `${id}.jsonl`;
  // All the files or none (a full disk leaves no part of the import in Claude Code's folder). Subagents first, the main
  // file last: a session file only appears once all of it is there. Folders get Claude Code's usual mode (no dirMode).
  const ordered = [...files].sort(([a], [b]) => Number(a === main) - Number(b === main));
  await writeNewFiles(ordered.map(([rel, lines]) => ({ path: join(folder, rel), text: lines.map((l) => `${l}\n`).join('') })));
  return { id, path: join(folder, main), entryCount: files.get(main)?.length ?? 0 };
}
