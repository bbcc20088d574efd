// Lists sessions by reading only each file's header (at most 4 KiB) or a cached summary checked against size and mtime.
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { projectDir } from './paths.js';
import { readHeader } from './session-reader.js';
import { loadSummaries, saveSummaries } from './summary-cache.js';
import type { FileSummary } from './summary-cache.js';
import { peekTailState } from './tail-state.js';

export interface SessionSummary {
  id: string;
  path: string;
  cwd: string;
  timestamp: string;
  mtimeMs: number;
  size: number;
  name?: string;
  messageCount?: number;
}

export interface ListOptions {
  root: string;
  /** This project's realpath-normalised cwd (required unless `all`). */
  realCwd?: string;
  all?: boolean;
  /** Receives files that were skipped because their header is unreadable. */
  skipped?: { path: string; reason: string }[];
}

const PARALLEL = 32;

async function mapLimit<T, R>(items: readonly T[], fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  return out;
}

async function readdirOrEmpty(dir: string): Promise<import('node:fs').Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** Header cwd vs this project: equal, or equal after realpath (a session written through a symlinked path). */
function cwdMatcher(realCwd: string): (cwd: string) => Promise<boolean> {
  const seen = new Map<string, Promise<boolean>>();
  return (cwd) => {
    if (cwd === realCwd) return Promise.resolve(true);
    let p = seen.get(cwd);
    if (!p) {
      p = realpath(cwd).then(
        (r) => r === realCwd,
        () => false, // a cwd that does not exist here cannot be this project
      );
      seen.set(cwd, p);
    }
    return p;
  };
}

async function listDir(dir: string, opts: ListOptions, matches: ((cwd: string) => Promise<boolean>) | null): Promise<SessionSummary[]> {
  const names = (await readdirOrEmpty(dir)).filter((d) => d.isFile() && d.name.endsWith('.jsonl') && !d.name.startsWith('.')).map((d) => d.name);
  if (names.length === 0) return [];
  const cache = await loadSummaries(dir);
  let dirty = false;
  const fresh: Record<string, FileSummary> = {};
  const rows = await mapLimit(names, async (name): Promise<SessionSummary | null> => {
    const path = join(dir, name);
    let st;
    try {
      st = await stat(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null; // removed while listing
      throw e;
    }
    let s = cache.files[name];
    if (!s || s.size !== st.size || s.mtimeMs !== st.mtimeMs) {
      const h = await readHeader(path);
      if (!h.ok) {
        opts.skipped?.push({ path, reason: h.reason });
        return null;
      }
      s = { size: st.size, mtimeMs: st.mtimeMs, id: h.header.id, cwd: h.header.cwd, timestamp: h.header.timestamp };
      // Name and message count only when an earlier append or open left them for exactly this size and mtime.
      const t = await peekTailState(path);
      if (t && t.size === st.size && t.mtimeMs === st.mtimeMs) {
        s.messageCount = t.messageCount;
        if (t.name !== undefined) s.name = t.name;
      }
      dirty = true;
    }
    fresh[name] = s;
    if (matches && !(await matches(s.cwd))) return null;
    const row: SessionSummary = { id: s.id, path, cwd: s.cwd, timestamp: s.timestamp, mtimeMs: s.mtimeMs, size: s.size };
    if (s.name !== undefined) row.name = s.name;
    if (s.messageCount !== undefined) row.messageCount = s.messageCount;
    return row;
  });
  if (dirty || Object.keys(cache.files).length !== Object.keys(fresh).length) await saveSummaries({ ...cache, files: fresh });
  return rows.filter((r): r is SessionSummary => r !== null);
}

/** Sessions of this project (header cwd checked: the folder name is lossy) or of every project; newest first (mtime). */
export async function listSessions(opts: ListOptions): Promise<SessionSummary[]> {
  let out: SessionSummary[];
  if (opts.all) {
    const dirs = (await readdirOrEmpty(opts.root)).filter((d) => d.isDirectory()).map((d) => join(opts.root, d.name));
    out = [];
    for (const dir of dirs) out.push(...(await listDir(dir, opts, null)));
  } else {
    if (!opts.realCwd) throw new Error('listSessions: realCwd is required unless all is set');
    out = await listDir(projectDir(opts.root, opts.realCwd), opts, cwdMatcher(opts.realCwd));
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.id < b.id ? 1 : -1));
}
