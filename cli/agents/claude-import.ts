// Claude Code files -> the mirror: lines appended since the last read go to the session's mirror file, each as one entry.
import { rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCode } from '../../shared/agents/claude-code.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { CURRENT_VERSION } from '../../shared/entry.js';
import { appendEntries, createSessionFile } from '../store/session-writer.js';
import { readSession } from '../store/session-reader.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { claudeMirrorRoot, claudeProjectsRoot, claudeReadPoint } from './claude-paths.js';
import { pathInProject } from '../sync/project-key.js';
import { findClaudeSessions } from './claude-files.js';
import { readClaudeFile, saveReadPoint, type FileRead } from './claude-read.js';
import type { FileMark, MirrorState } from './mirror-state.js';

export interface ImportResult {
  sessions: number;
  /** Lines newly mirrored. */
  lines: number;
  /** Bytes read: of Claude Code's files, of read points, and of mirror files checked for ids. */
  bytesRead: number;
  /** Files read again from the start because they changed before the part already read. */
  rewritten: number;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * A session mirrored before whose main file is gone (deleted by the user, or by Claude Code's cleanup): its mirror is
 * renamed aside, so the engine sees a deleted session, which a sync does not pull back (`sessync restore` does). Its
 * lines stay in the renamed file (until a restore folds them into the restored mirror) and on the server.
 */
async function setAsideDeleted(state: MirrorState, present: ReadonlySet<string>, note: (t: string) => void): Promise<void> {
  for (const [session, s] of Object.entries(state.sessions)) {
    if (present.has(session) || !(await exists(s.mirror)) || (await exists(join(s.folder, `${session}.jsonl`)))) continue;
    await rename(s.mirror, `${s.mirror}.deleted-here`);
    // Its files are gone: what was read of them says nothing about files a restore writes there again.
    const base = join(s.folder, session);
    for (const path of Object.keys(state.files)) if (path === `${base}.jsonl` || path.startsWith(`${base}/`)) delete state.files[path];
    note(`Claude Code session ${session} was deleted from ${s.folder}; sessync keeps it on the server and does not bring it back (\`sessync restore ${session}\` does)`);
  }
}

/**
 * After `sessync restore` pulled session `session` into `mirror` again: the mirror set aside when its files were deleted
 * goes. Lines only it holds (appended here and deleted before they were pushed) are appended to `mirror` first, so
 * they are written back with the rest and pushed by the next sync: nothing of it is lost.
 */
export async function dropSetAside(env: NodeJS.ProcessEnv, state: MirrorState, session: string, mirror: string, note: (t: string) => void): Promise<void> {
  const known = state.sessions[session]?.mirror;
  for (const aside of new Set([mirror, ...(known ? [known] : [])].map((m) => `${m}.deleted-here`))) {
    if (!(await exists(aside))) continue;
    const have = new Set((await readSession(mirror)).entries.map((e) => e.id));
    const only = (await readSession(aside)).entries.filter((e) => !have.has(e.id));
    if (only.length > 0) {
      await appendEntries(mirror, only, { env });
      note(`Claude Code session ${session}: ${only.length} line(s) deleted here before they were pushed are back too (the next sync pushes them)`);
    }
    await unlink(aside);
  }
}

/**
 * Mirrors the Claude Code sessions of this machine (of the project folders in `only`, else of all). A session whose
 * files did not change since is not read; a grown file is read from where the last read stopped, so a sync costs
 * what was appended, not the size of the history.
 */
export async function importClaude(env: NodeJS.ProcessEnv, state: MirrorState, note: (t: string) => void, only?: ReadonlySet<string>): Promise<ImportResult> {
  const result: ImportResult = { sessions: 0, lines: 0, bytesRead: 0, rewritten: 0 };
  const mirrorRoot = claudeMirrorRoot(env);
  const all = await findClaudeSessions(claudeProjectsRoot(env), note, only);
  await setAsideDeleted(state, new Set(all.map((f) => f.session)), note);
  for (const found of all) {
    try {
      const stats = await Promise.all(found.files.map((f) => stat(join(found.folder, f.rel))));
      const known = state.sessions[found.session];
      const same = found.files.every((f, i) => {
        const was = state.files[join(found.folder, f.rel)];
        return was !== undefined && was.size === stats[i]!.size && was.mtimeMs === stats[i]!.mtimeMs;
      });
      const mirrored = known !== undefined && known.folder === found.folder && (await exists(known.mirror));
      if (same && mirrored) continue;
      const reads: FileRead[] = [];
      const unreadable: [string, FileMark][] = [];
      for (const [i, file] of found.files.entries()) {
        const path = join(found.folder, file.rel);
        const r = await readClaudeFile(path, file, stats[i]!, mirrored ? state.files[path] : undefined, claudeReadPoint(env, path), note);
        if (r === null) {
          // Reported: not read again until it changes.
          unreadable.push([path, { size: stats[i]!.size, mtimeMs: stats[i]!.mtimeMs }]);
          continue;
        }
        result.bytesRead += r.bytes;
        if (r.rewritten) result.rewritten++;
        reads.push(r);
      }
      const main = reads[0];
      if (!main || main.file.kind !== 'main') continue; // reported by the reader
      if (main.fromStart && !main.lines.some((l) => typeof l.value.uuid === 'string')) {
        note(`${join(found.folder, main.file.rel)}: no line with a uuid; not a Claude Code session, not synced`);
        continue;
      }
      result.sessions++;
      const entries: SessionEntry[] = reads.flatMap(({ file, lines }) => lines.map((l) => claudeCode.toEntry(l, file)));
      let mirror = mirrored ? known.mirror : undefined;
      let header: SessionHeader | undefined;
      if (mirror === undefined) {
        const cwd = claudeCode.projectHints({ lines: main.lines, problems: [], tail: '' }).cwd;
        if (!cwd) {
          note(`${join(found.folder, main.file.rel)}: no line names the session's cwd; not synced`);
          continue;
        }
        const timestamp = main.lines.find((l) => l.timestamp)?.timestamp ?? new Date().toISOString();
        // The header is sessync's, written on this machine only: it names the agent, which the session's meta carries.
        // cwdInProject: a session started in a subfolder of its repository resumes in that subfolder where it is pulled.
        const sub = await pathInProject(cwd);
        header = { type: 'session', version: CURRENT_VERSION, id: found.session, timestamp, cwd, agent: 'claude-code', ...(sub !== null ? { cwdInProject: sub } : {}) };
        mirror = join(projectDir(mirrorRoot, cwd), sessionFileName(timestamp, found.session));
        // Already there when a run stopped before its bookkeeping was saved: then it is appended to like any mirror.
        if (await exists(mirror)) header = undefined;
      }
      if (header !== undefined) {
        await createSessionFile(mirror, header, entries, undefined, env);
        result.lines += entries.length;
      } else {
        // The mirror holds exactly what was read before when sessync wrote it last and no file was read again: what
        // was read now is new. Otherwise (a pull wrote there, a file was rewritten, a run stopped early) its ids decide.
        const size = (await stat(mirror)).size;
        let fresh = entries;
        if (!mirrored || known.mirrorSize !== size || reads.some((r) => r.rewritten || (r.fromStart && state.files[join(found.folder, r.file.rel)] !== undefined))) {
          result.bytesRead += size;
          const have = new Set((await readSession(mirror)).entries.map((e) => e.id));
          fresh = entries.filter((e) => !have.has(e.id));
        }
        if (fresh.length > 0) await appendEntries(mirror, fresh, { env });
        result.lines += fresh.length;
      }
      // The read points first: bookkeeping saved ahead of them finds them disagreeing and reads those files whole.
      for (const r of reads) if (r.point) await saveReadPoint(claudeReadPoint(env, join(found.folder, r.file.rel)), r.point);
      state.sessions[found.session] = { mirror, folder: found.folder, mirrorSize: (await stat(mirror)).size };
      for (const r of reads) state.files[join(found.folder, r.file.rel)] = r.mark;
      for (const [path, mark] of unreadable) state.files[path] = mark;
    } catch (e) {
      // One session's trouble (a file removed while read, a mirror file damaged) is reported; the others go on.
      note(`Claude Code session ${found.session} in ${found.folder}: ${(e as Error).message}`);
    }
  }
  return result;
}
