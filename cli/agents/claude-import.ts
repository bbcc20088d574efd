// Claude Code files -> the mirror: lines not yet mirrored are appended to the session's mirror file, each as one entry.
import { readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCode } from '../../shared/agents/claude-code.js';
import type { AgentLine, SessionFile } from '../../shared/agents/agent.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { CURRENT_VERSION } from '../../shared/entry.js';
import { LIMITS } from '../../shared/wire.js';
import { writeMirror } from './mirror-write.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { claudeMirrorRoot, claudeProjectsRoot } from './claude-paths.js';
import { findClaudeSessions, type FoundSession } from './claude-files.js';
import type { MirrorState } from './mirror-state.js';

export interface ImportResult {
  sessions: number;
  /** Lines newly mirrored. */
  lines: number;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A file's text with every line that is not valid UTF-8 left blank (its number kept): decoding it would change its
 * bytes, and a line is only ever synced byte-exact. Returns the numbers of those lines.
 */
export async function readUtf8(path: string): Promise<{ text: string; bad: number[] }> {
  const buf = await readFile(path);
  try {
    return { text: strictUtf8.decode(buf), bad: [] };
  } catch {
    // Some line holds other bytes: decode line by line to find which (rare, so not the fast path).
  }
  const parts: string[] = [];
  const bad: number[] = [];
  let start = 0;
  for (let no = 1; start <= buf.length; no++) {
    let nl = buf.indexOf(0x0a, start);
    if (nl < 0) nl = buf.length;
    try {
      parts.push(strictUtf8.decode(buf.subarray(start, nl)));
    } catch {
      parts.push('');
      bad.push(no);
    }
    start = nl + 1;
  }
  return { text: parts.join('\n'), bad };
}

/** Reads one session's files; lines that cannot be read are reported with file and line, and never mirrored. */
async function readFound(found: FoundSession, note: (t: string) => void): Promise<{ file: SessionFile; lines: AgentLine[] }[] | null> {
  const out: { file: SessionFile; lines: AgentLine[] }[] = [];
  for (const file of found.files) {
    const path = join(found.folder, file.rel);
    const { text, bad } = await readUtf8(path);
    if (file.kind === 'tool-result' && bad.length > 0) {
      note(`${path}: not UTF-8 text; not synced (it stays as it is)`);
      continue;
    }
    for (const no of bad) note(`${path}:${no}: bytes that are not UTF-8; this line is not synced (it stays in the file)`);
    if (file.kind === 'tool-result' && Buffer.byteLength(text) > LIMITS.maxEntryBytes) {
      note(`${path}: ${Buffer.byteLength(text)} bytes, over the ${LIMITS.maxEntryBytes}-byte entry limit; not synced`);
      continue;
    }
    const parsed = claudeCode.parseFile(text, file);
    for (const p of parsed.problems) note(`${path}:${p.line}: ${p.reason}; this line is not synced (it stays in the file)`);
    out.push({ file, lines: parsed.lines });
  }
  const main = out[0];
  if (!main || !main.lines.some((l) => typeof l.value.uuid === 'string')) {
    note(`${join(found.folder, found.files[0]!.rel)}: no line with a uuid; not a Claude Code session, not synced`);
    return null;
  }
  return out;
}

/**
 * A session mirrored before whose main file is gone (deleted by the user, or by Claude Code's cleanup): its mirror is
 * renamed aside, so the engine sees a deleted session, which a sync does not pull back (`sessync restore` does). Its
 * lines stay in the renamed file and on the server.
 */
async function setAsideDeleted(state: MirrorState, present: ReadonlySet<string>, note: (t: string) => void): Promise<void> {
  for (const [session, s] of Object.entries(state.sessions)) {
    if (present.has(session) || !(await exists(s.mirror)) || (await exists(join(s.folder, `${session}.jsonl`)))) continue;
    await rename(s.mirror, `${s.mirror}.deleted-here`);
    note(`Claude Code session ${session} was deleted from ${s.folder}; sessync keeps it on the server and does not bring it back (\`sessync restore ${session}\` does)`);
  }
}

/**
 * Mirrors the Claude Code sessions of this machine (of the project folders in `only`, else of all); a session whose
 * files did not change since is not read.
 */
export async function importClaude(env: NodeJS.ProcessEnv, state: MirrorState, note: (t: string) => void, only?: ReadonlySet<string>): Promise<ImportResult> {
  const result: ImportResult = { sessions: 0, lines: 0 };
  const mirrorRoot = claudeMirrorRoot(env);
  const all = await findClaudeSessions(claudeProjectsRoot(env), note, only);
  await setAsideDeleted(state, new Set(all.map((f) => f.session)), note);
  for (const found of all) {
    try {
      const stats = await Promise.all(found.files.map((f) => stat(join(found.folder, f.rel))));
      const known = state.sessions[found.session];
      const unchanged =
        known !== undefined &&
        known.folder === found.folder &&
        (await exists(known.mirror)) &&
        found.files.every((f, i) => {
          const was = state.files[join(found.folder, f.rel)];
          return was !== undefined && was.size === stats[i]!.size && was.mtimeMs === stats[i]!.mtimeMs;
        });
      if (unchanged) continue;
      const files = await readFound(found, note);
      if (!files) continue;
      result.sessions++;
      const entries: SessionEntry[] = files.flatMap(({ file, lines }) => lines.map((l) => claudeCode.toEntry(l, file)));
      let mirror = known && (await exists(known.mirror)) ? known.mirror : undefined;
      let header: SessionHeader | undefined;
      if (mirror === undefined) {
        const main = files[0]!;
        const cwd = claudeCode.projectHints({ lines: main.lines, problems: [], tail: '' }).cwd;
        if (!cwd) {
          note(`${join(found.folder, main.file.rel)}: no line names the session's cwd; not synced`);
          continue;
        }
        const timestamp = main.lines.find((l) => l.timestamp)?.timestamp ?? new Date().toISOString();
        // The header is sessync's, written on this machine only: it names the agent, which the session's meta carries.
        header = { type: 'session', version: CURRENT_VERSION, id: found.session, timestamp, cwd, agent: 'claude-code' };
        mirror = join(projectDir(mirrorRoot, cwd), sessionFileName(timestamp, found.session));
        // Already there when a run stopped before its bookkeeping was saved: then it is appended to like any mirror.
        if (await exists(mirror)) header = undefined;
      }
      result.lines += await writeMirror(mirror, header, entries);
      state.sessions[found.session] = { mirror, folder: found.folder };
      found.files.forEach((f, i) => (state.files[join(found.folder, f.rel)] = { size: stats[i]!.size, mtimeMs: stats[i]!.mtimeMs }));
    } catch (e) {
      // One session's trouble (a file removed while read, a mirror file damaged) is reported; the others go on.
      note(`Claude Code session ${found.session} in ${found.folder}: ${(e as Error).message}`);
    }
  }
  return result;
}
