// The mirror -> Claude Code files: lines a pull brought are appended to the session's own files, byte-exact, and the
// leaf sessync agrees on is pinned with Claude Code's own last-prompt line, so `claude --resume` continues there.
import { open, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { claudeCode, claudeProjectFolder } from '../../shared/agents/claude-code.js';
import type { SessionFile } from '../../shared/agents/agent.js';
import { writeFileAtomic } from '../store/atomic-json.js';
import { readSession } from '../store/session-reader.js';
import { endsWithNewline, fsyncPath } from '../store/session-writer.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { appendWhole } from '../store/append-whole.js';
import { mkdirTree } from '../store/mkdir-tree.js';
import { fsError } from '../fs-error.js';
import { claudeProjectsRoot } from './claude-paths.js';
import type { MirrorState } from './mirror-state.js';

export interface ExportResult {
  sessions: number;
  /** Lines appended to Claude Code files (pins included). */
  lines: number;
  created: number;
  /** Sessions left for the next sync, a file of theirs ending in a line Claude Code is still writing. */
  waiting: string[];
}

function kindOf(rel: string, session: string): SessionFile['kind'] {
  if (rel === `${session}.jsonl`) return 'main';
  return rel.includes('/tool-results/') ? 'tool-result' : 'subagent';
}

export async function readOr(path: string, missing: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return missing;
    throw e;
  }
}

/**
 * What to do when no agent is writing: a line a crash cut stays without its end until something ends it, and sessync
 * never appends after it (the two lines would be glued into one the agent cannot read).
 */
export const TORN_WAY_OUT = " (if no agent is running, a crash cut that line: end it with `echo >> <file>` and sync again; the cut line then stays as a damaged line of its own)";

/**
 * Appends lines and fsyncs them (creating the file and its folder when needed): all of them, or (a full disk) the
 * agent's file as it was, never ending in half a line the agent would read as a broken entry. A file whose last line
 * has no '\n' is the agent writing it: nothing is appended (fs_busy), as the new lines would be glued onto that one.
 */
export async function appendLines(path: string, lines: string[]): Promise<void> {
  // The agent's folders keep the mode they have always had (Node's default); a failure says why, as appendWhole's do.
  await mkdirTree(dirname(path)).catch((e: unknown) => {
    throw fsError(e);
  });
  // Read-write: the last byte is read through the handle the append is made with.
  const fh = await open(path, 'a+', 0o600);
  try {
    // The callers look for a torn last line when they read the file; this covers the time since (Codex's export
    // may wait on the server in between).
    const size = (await fh.stat()).size;
    if (size > 0 && !(await endsWithNewline(fh, size))) {
      throw new SessyncError('fs_busy', `${path}: its last line is still being written (no line end yet); nothing was appended, the lines go there on the next sync${TORN_WAY_OUT}`, {
        retryable: true,
        details: { path },
      });
    }
    await appendWhole(fh, path, Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8'));
  } finally {
    await fh.close();
  }
}

/**
 * Brings each given mirror file's lines into the Claude Code files of its session. A file Claude Code is in the middle
 * of writing (its last line has no '\n' yet) is left alone and reported; the next sync appends to it.
 */
export async function exportClaude(env: NodeJS.ProcessEnv, state: MirrorState, mirrors: string[], note: (t: string) => void): Promise<ExportResult> {
  const result: ExportResult = { sessions: 0, lines: 0, created: 0, waiting: [] };
  const pending = new Set<string>();
  /** Each mirror's session, for the ones left pending. */
  const sessionOf = new Map<string, string>();
  for (const mirror of new Set([...mirrors, ...state.pendingExport])) {
    try {
      const open_ = await readSession(mirror);
      const session = open_.header.id;
      sessionOf.set(mirror, session);
      const known = state.sessions[session];
      const folder = known?.folder ?? join(claudeProjectsRoot(env), claudeProjectFolder(String(open_.header.cwd)));
      const mainRel = `${session}.jsonl`;
      const byRel = new Map<string, { text: string; whole: boolean; id: string }[]>();
      for (const e of open_.entries) {
        const back = claudeCode.fromEntry(e);
        if (!back) continue;
        const rel = back.rel === '' ? mainRel : back.rel;
        let list = byRel.get(rel);
        if (!list) byRel.set(rel, (list = []));
        list.push({ text: back.text, whole: back.whole === true, id: e.id });
      }
      if (!byRel.has(mainRel)) continue;
      const createdMain = !(await stat(join(folder, mainRel)).then(() => true, () => false));
      let wrote = 0;
      /** Files left alone because their last line is being written (each said once). */
      const busy = new Set<string>();
      for (const [rel, wanted] of byRel) {
        const path = join(folder, rel);
        const kind = kindOf(rel, session);
        if (kind === 'tool-result') {
          const w = wanted[0]!;
          if ((await readOr(path, '\u0000missing')) === '\u0000missing') {
            await writeFileAtomic(path, w.text);
            await fsyncPath(dirname(path));
            wrote++;
          }
          continue;
        }
        const text = await readOr(path, '');
        const parsed = claudeCode.parseFile(text, { rel, kind });
        if (parsed.tail !== '') {
          note(`${path}: its last line is still being written; the pulled lines go there on the next sync${TORN_WAY_OUT}`);
          busy.add(path);
          pending.add(mirror);
          continue;
        }
        const have = new Set(parsed.lines.map((l) => l.id));
        const missing = wanted.filter((w) => !have.has(w.id)).map((w) => w.text);
        if (missing.length > 0) {
          await appendLines(path, missing);
          wrote += missing.length;
        }
      }
      // Both machines now hold the same lines but maybe in another order: make Claude Code's leaf the one sessync agrees on.
      const mainPath = join(folder, mainRel);
      const main = claudeCode.parseFile(await readOr(mainPath, ''), { rel: mainRel, kind: 'main' });
      if (main.tail !== '') {
        // Claude Code is writing the main file's last line (maybe since the loop above): a pin appended now would be
        // glued onto that line and break both. It is made on the next sync, with the pulled lines.
        if (!busy.has(mainPath)) note(`${mainPath}: its last line is still being written; the line naming the synced leaf goes there on the next sync${TORN_WAY_OUT}`);
        pending.add(mirror);
      } else {
        const leaf = claudeCode.syncLeaf(main.lines);
        const pin = leaf === null ? [] : claudeCode.pinLeaf(main.lines, leaf, session);
        if (pin.length > 0) {
          await appendLines(mainPath, pin);
          wrote += pin.length;
        }
      }
      if (createdMain) result.created++;
      if (wrote > 0) result.sessions++;
      result.lines += wrote;
      state.sessions[session] = { mirror, folder };
    } catch (e) {
      note(`${mirror}: ${(fsError(e) as Error).message}; its Claude Code files are left as they are`);
      // A file Claude Code started a line in since it was read: tried again on the next sync, as when seen torn above.
      if (isSessyncError(e, 'fs_busy')) pending.add(mirror);
    }
  }
  state.pendingExport = [...pending];
  for (const m of pending) {
    const session = sessionOf.get(m);
    if (session !== undefined) result.waiting.push(session);
  }
  return result;
}
