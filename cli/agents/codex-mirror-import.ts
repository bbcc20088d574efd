// Codex rollouts -> the mirror: lines not yet mirrored are appended to the session's mirror file, each as one entry.
import { readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { codex, codexMeta, codexTravelling } from '../../shared/agents/codex.js';
import type { AgentLine } from '../../shared/agents/agent.js';
import { CURRENT_VERSION, type SessionHeader } from '../../shared/entry.js';
import { LIMITS } from '../../shared/wire.js';
import { writeMirror } from './mirror-write.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { pathInProject } from '../sync/project-key.js';
import { decodeLines } from './claude-read.js';
import { findRollouts, type FoundRollout } from './codex-files.js';
import { codexMirrorRoot, codexSessionsRoot } from './codex-paths.js';
import type { CodexState } from './codex-state.js';

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export interface ReadRollout {
  /** The lines that travel, chained without those that cannot (codexTravelling). */
  lines: AgentLine[];
  tail: string;
  /** Lines in the file that are not among `lines` (unreadable, or over the entry size limit): a rewrite would drop them. */
  unreadable: number;
  /** Lines over the entry size limit: they stay in this file, the lines after them travel. */
  over: { line: AgentLine; bytes: number }[];
}

/**
 * A rollout's usable lines; unreadable ones are reported with file and line and never mirrored (they stay in the file).
 * Lines over the entry size limit are left out too, but not reported here: importCodexMirror does that, once.
 */
export async function readRollout(path: string, rel: string, note: (t: string) => void): Promise<ReadRollout> {
  const { text, bad } = decodeLines(await readFile(path));
  for (const no of bad) note(`${path}:${no}: bytes that are not UTF-8; this line is not synced (it stays in the file)`);
  const file = { rel, kind: 'main' as const };
  const parsed = codex.parseFile(text, file);
  for (const p of parsed.problems) note(`${path}:${p.line}: ${p.reason}; this line is not synced (it stays in the file)`);
  const { lines, over } = codexTravelling(parsed.lines, file, LIMITS.maxEntryBytes);
  return { lines, tail: parsed.tail, unreadable: bad.length + parsed.problems.length + over.length, over };
}

/** Tells of each line over the entry size limit once per rollout and line, not on every sync after. */
function reportOver(state: CodexState, found: FoundRollout, over: ReadRollout['over'], note: (t: string) => void): void {
  if (over.length === 0) return;
  const told = new Set(state.tooBig[found.path] ?? []);
  for (const { line, bytes } of over) {
    if (told.has(line.id)) continue;
    told.add(line.id);
    note(`${found.path}:${line.line}: a line of ${bytes} bytes as an entry, over the ${LIMITS.maxEntryBytes}-byte limit: it stays in this file and is not synced; the lines after it are`);
  }
  state.tooBig[found.path] = [...told];
}

/**
 * The mirror's header for a rollout: sessync's own, on this machine only; it names the agent and the fork's origin, and
 * (cwdInProject) the subfolder of its repository the session was started in, so a machine that pulls it files it there.
 * `inProject` answers that for a cwd (one git call per folder in a run, not one per rollout).
 */
async function headerOf(found: FoundRollout, lines: AgentLine[], inProject: (cwd: string) => Promise<string | null>): Promise<SessionHeader | null> {
  const hints = codex.projectHints({ lines, problems: [], tail: '' });
  const cwd = hints.cwd;
  if (!cwd) return null;
  const meta = codexMeta(lines);
  const timestamp = (typeof meta?.timestamp === 'string' && meta.timestamp) || lines.find((l) => l.timestamp)?.timestamp || new Date().toISOString();
  const from = typeof meta?.forked_from_id === 'string' ? meta.forked_from_id : undefined;
  const sub = await inProject(cwd);
  return { type: 'session', version: CURRENT_VERSION, id: found.session, timestamp, cwd, agent: 'codex', ...(hints.gitUrl ? { gitUrl: hints.gitUrl } : {}), ...(from ? { forkedFrom: from } : {}), ...(sub !== null ? { cwdInProject: sub } : {}) };
}

/** A session mirrored before whose rollout is gone: its mirror goes aside, so a sync does not bring it back (restore does). */
async function setAsideDeleted(state: CodexState, present: ReadonlySet<string>, note: (t: string) => void): Promise<void> {
  for (const [session, s] of Object.entries(state.sessions)) {
    if (present.has(session) || !(await exists(s.mirror)) || (await exists(s.rollout))) continue;
    await rename(s.mirror, `${s.mirror}.deleted-here`);
    note(`Codex session ${session} was deleted from ${s.rollout}; sessync keeps it on the server and does not bring it back (\`sessync restore ${session}\` does)`);
  }
}

/** Mirrors the rollouts of this machine; a rollout that did not change since it was last read is not read again. */
export async function importCodexMirror(env: NodeJS.ProcessEnv, state: CodexState, note: (t: string) => void): Promise<{ sessions: number; lines: number }> {
  const result = { sessions: 0, lines: 0 };
  const all = await findRollouts(codexSessionsRoot(env), note);
  await setAsideDeleted(state, new Set(all.map((f) => f.session)), note);
  const subfolders = new Map<string, Promise<string | null>>();
  const inProject = (cwd: string) => {
    let p = subfolders.get(cwd);
    if (!p) subfolders.set(cwd, (p = pathInProject(cwd)));
    return p;
  };
  for (const found of all) {
    try {
      const st = await stat(found.path);
      const known = state.sessions[found.session];
      const was = state.files[found.path];
      if (known?.rollout === found.path && was?.size === st.size && was.mtimeMs === st.mtimeMs && (await exists(known.mirror))) continue;
      const { lines, over } = await readRollout(found.path, found.rel, note);
      reportOver(state, found, over, note);
      if (lines.length === 0) continue; // empty, or only a line still being written: next run
      const entries = lines.map((l) => codex.toEntry(l, { rel: found.rel, kind: 'main' }));
      let mirror = known && (await exists(known.mirror)) ? known.mirror : undefined;
      let header: SessionHeader | null = null;
      if (mirror === undefined) {
        header = await headerOf(found, lines, inProject);
        if (!header) {
          note(`${found.path}: no session_meta naming the session's cwd; not synced`);
          continue;
        }
        mirror = join(projectDir(codexMirrorRoot(env), header.cwd), sessionFileName(header.timestamp, found.session));
        if (await exists(mirror)) header = null; // a run stopped before its bookkeeping was saved: append to it
      }
      // A mirror that held nothing unwritten-out before gains only this rollout's own lines: still in step with it, so
      // the next run need not write it out (a first sync of thousands of rollouts reads each once, not twice).
      const out = state.exported[mirror];
      const before = header ? null : await stat(mirror);
      const inStep = header !== null || (out !== undefined && before !== null && out.size === before.size && out.mtimeMs === before.mtimeMs);
      result.lines += await writeMirror(mirror, header ?? undefined, entries, env);
      if (inStep) {
        const after = await stat(mirror);
        state.exported[mirror] = { size: after.size, mtimeMs: after.mtimeMs };
      }
      result.sessions++;
      state.sessions[found.session] = { mirror, rollout: found.path };
      state.files[found.path] = { size: st.size, mtimeMs: st.mtimeMs };
      state.lastLocal[found.session] = lines[lines.length - 1]!.id;
    } catch (e) {
      note(`Codex session ${found.session} at ${found.path}: ${(e as Error).message}`);
    }
  }
  return result;
}
