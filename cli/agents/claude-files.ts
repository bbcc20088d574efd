// Finds Claude Code sessions on disk: each project folder's files, grouped into sessions by the adapter's rules.
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCode } from '../../shared/agents/claude-code.js';
import { parseJsonLines } from '../../shared/jsonl.js';
import type { SessionFile } from '../../shared/agents/agent.js';

export interface FoundSession {
  session: string;
  /** The project folder (absolute). */
  folder: string;
  files: SessionFile[];
}

async function names(dir: string): Promise<{ name: string; dir: boolean }[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).map((d) => ({ name: d.name, dir: d.isDirectory() }));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw e;
  }
}

/** The first line of a file (at most 64 KiB of it), for files whose owner only their content says. */
async function firstLine(path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
    return buf.toString('utf8', 0, nl < 0 ? bytesRead : nl);
  } finally {
    await fh.close();
  }
}

/** Paths inside a project folder that can belong to a session: top-level files, <session>/subagents/*, <session>/tool-results/*. */
async function projectRels(folder: string): Promise<string[]> {
  const rels: string[] = [];
  for (const e of await names(folder)) {
    if (!e.dir) {
      rels.push(e.name);
      continue;
    }
    for (const sub of ['subagents', 'tool-results']) for (const f of await names(join(folder, e.name, sub))) if (!f.dir) rels.push(`${e.name}/${sub}/${f.name}`);
  }
  return rels;
}

/**
 * Whether a project folder under `root` holds a session whose id (its main file's name: `<id>.jsonl`) `matches`. Only
 * names are read, no file is opened: what a ref lookup asks before it pays for bringing the mirror up to date.
 */
export async function anyClaudeSession(root: string, matches: (id: string) => boolean): Promise<boolean> {
  for (const p of await names(root)) {
    if (!p.dir) continue;
    for (const f of await names(join(root, p.name))) {
      const id = f.dir ? null : claudeCode.sessionOf(f.name);
      if (id !== null && matches(id)) return true;
    }
  }
  return false;
}

/**
 * Every session in every project folder. A session folder without its main file is reported through `problem` and
 * left out (its files stay as they are); one bad folder never stops the others. `only`: these project folders (names).
 */
export async function findClaudeSessions(root: string, problem: (text: string) => void, only?: ReadonlySet<string>): Promise<FoundSession[]> {
  const out: FoundSession[] = [];
  for (const p of await names(root)) {
    if (!p.dir || (only && !only.has(p.name))) continue;
    out.push(...(await folderSessions(join(root, p.name), problem)));
  }
  return out;
}

/** The sessions of one project folder (absolute), each with its files, main file first. */
export async function folderSessions(folder: string, problem: (text: string) => void): Promise<FoundSession[]> {
  const out: FoundSession[] = [];
  const rels = await projectRels(folder);
  const firstLines = new Map<string, string>();
  const ids = new Set<string>();
  // Each session's candidate paths, so grouping a folder of n sessions costs n, not n * n.
  const candidates = new Map<string, string[]>();
  const add = (s: string, rel: string) => {
    let list = candidates.get(s);
    if (!list) candidates.set(s, (list = []));
    list.push(rel);
  };
  for (const rel of rels) {
    const s = claudeCode.sessionOf(rel);
    if (s) {
      ids.add(s);
      add(s, rel);
    }
    const top = rel.split('/')[0]!;
    if (rel.includes('/') && claudeCode.sessionOf(`${top}.jsonl`)) {
      ids.add(top);
      add(top, rel);
    }
    if (!rel.includes('/') && /^agent-.*\.jsonl$/.test(rel)) {
      const line = await firstLine(join(folder, rel)).catch(() => '');
      firstLines.set(rel, line);
      const owner = parseJsonLines(`${line}\n`).lines[0]?.value?.sessionId;
      if (typeof owner === 'string' && claudeCode.sessionOf(`${owner}.jsonl`) === owner) {
        ids.add(owner);
        add(owner, rel);
      }
    }
  }
  for (const session of [...ids].sort()) {
    const files = claudeCode.sessionFiles(session, candidates.get(session) ?? [], firstLines);
    if (files.length === 0) continue;
    if (files[0]!.kind !== 'main') {
      problem(`${join(folder, session)}: ${files.length} file(s) of session ${session} but no ${session}.jsonl; not synced (nothing is changed there)`);
      continue;
    }
    out.push({ session, folder, files });
  }
  return out;
}
