// Lists sessions, newest entry first, from each file's first and last 4 KiB or a cached summary checked against size and mtime.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectDir } from './paths.js';
import { oneFilePerSession } from './pi-folders.js';
import { readHeadAndTailSync } from './last-entry-time.js';
import { loadSummaries, saveSummaries, SummaryLookup } from './summary-cache.js';
import type { SummaryRow } from './summary-cache.js';
import { peekTailStateSync } from './tail-state.js';
import { saveCache } from './cache-save.js';

export interface SessionSummary {
  id: string;
  path: string;
  cwd: string;
  timestamp: string;
  /** The newest entry's time (the header's when there is none): what list sorts by, the same on every machine. */
  lastEntryAt: string;
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
  /** More folders read as part of this one (pi's two folders): a session in two of them counts once, its newer file. */
  also?: string[];
  /** root is pi's own sessionDir: every project's files sit directly in it (besides any per-project folders). */
  flat?: boolean;
  /** The run's environment: its SESSYNC_HOME holds the list and tail caches (default process.env). */
  env?: NodeJS.ProcessEnv;
}

// Sync file calls on purpose: per file they cost microseconds where async ones cost tens (thread-pool round
// trips), and listing thousands of files is all this does meanwhile.

function orEmpty<T>(read: () => T[]): T[] {
  try {
    return read();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** Header cwd vs this project: equal, or equal after realpath (a session written through a symlinked path). */
function cwdMatcher(realCwd: string): (cwd: string) => boolean {
  const seen = new Map<string, boolean>();
  return (cwd) => {
    if (cwd === realCwd) return true;
    let same = seen.get(cwd);
    if (same === undefined) {
      try {
        same = realpathSync(cwd) === realCwd;
      } catch {
        same = false; // a cwd that does not exist here cannot be this project
      }
      seen.set(cwd, same);
    }
    return same;
  };
}

async function listDir(dir: string, opts: ListOptions, matches: ((cwd: string) => boolean) | null): Promise<SessionSummary[]> {
  // Names only: the stat below tells files from the rest, and 10,000 Dirent objects are not free.
  const names = orEmpty(() => readdirSync(dir)).filter((n) => n.endsWith('.jsonl') && !n.startsWith('.'));
  if (names.length === 0) return [];
  const cache = await loadSummaries(dir, opts.env);
  const cached = new SummaryLookup(cache.rows);
  let dirty = false;
  const seen: SummaryRow[] = []; // this run's rows, in listing order: the cache to save when anything changed
  const rows: SessionSummary[] = [];
  let kept = 0;
  for (const name of names) {
    const path = `${dir}/${name}`;
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st || !st.isFile()) continue; // removed while listing, or a folder named *.jsonl
    let s = cached.get(name, seen.length);
    if (!s || s[1] !== st.size || s[2] !== st.mtimeMs) {
      // Name and message count only when an earlier append or open left them for exactly this size and mtime.
      const t = peekTailStateSync(path, opts.env);
      const known = t !== null && t.size === st.size && t.mtimeMs === st.mtimeMs;
      let r;
      try {
        r = readHeadAndTailSync(path, st.size, st.mtimeMs, known ? t : null);
      } catch (e) {
        opts.skipped?.push({ path, reason: (e as Error).message });
        continue;
      }
      const h = r.header;
      if (!h.ok) {
        opts.skipped?.push({ path, reason: h.reason });
        continue;
      }
      s = [name, st.size, st.mtimeMs, h.header.id, h.header.cwd, h.header.timestamp, known ? (t.name ?? null) : null, known ? t.messageCount : null, r.lastEntryAt];
      dirty = true;
    } else {
      kept++;
    }
    seen.push(s);
    if (matches && !matches(s[4])) continue;
    const row: SessionSummary = { id: s[3], path, cwd: s[4], timestamp: s[5], lastEntryAt: s[8] ?? s[5], mtimeMs: s[2], size: s[1] };
    if (s[6] !== null) row.name = s[6];
    if (s[7] !== null) row.messageCount = s[7];
    rows.push(row);
  }
  // Rewrite when a row changed or a file went away (fewer rows kept than cached).
  if (dirty || kept !== cache.rows.length) await saveCache('list', saveSummaries({ ...cache, rows: seen }, opts.env));
  return rows;
}

/** Newest entry first, as pi lists; equal times by id, so every machine lists one order. Times parsed once per row. */
function byNewestEntry(rows: SessionSummary[]): SessionSummary[] {
  const keyed = rows.map((r) => ({ r, t: timeOr(r.lastEntryAt) }));
  keyed.sort((a, b) => (a.t !== b.t ? (b.t > a.t ? 1 : -1) : a.r.id === b.r.id ? 0 : a.r.id < b.r.id ? 1 : -1));
  return keyed.map((k) => k.r);
}

function timeOr(ts: string): number {
  const t = Date.parse(ts);
  return Number.isNaN(t) ? -Infinity : t;
}

/** Sessions of this project (header cwd checked: the folder name is lossy) or of every project; newest entry first. */
export async function listSessions(opts: ListOptions): Promise<SessionSummary[]> {
  if (opts.also?.length) {
    const { also, flat: _, ...one } = opts;
    const rows: SessionSummary[] = [...(await listSessions({ ...one, ...(opts.flat ? { flat: true } : {}) }))];
    for (const root of also) rows.push(...(await listSessions({ ...one, root })));
    return byNewestEntry(oneFilePerSession(rows, opts.skipped));
  }
  let out: SessionSummary[];
  if (opts.all) {
    const dirs = orEmpty(() => readdirSync(opts.root, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => join(opts.root, d.name));
    out = opts.flat ? await listDir(opts.root, opts, null) : [];
    for (const dir of dirs) out.push(...(await listDir(dir, opts, null)));
  } else {
    if (!opts.realCwd) throw new Error('listSessions: realCwd is required unless all is set');
    const matches = cwdMatcher(opts.realCwd);
    out = await listDir(projectDir(opts.root, opts.realCwd), opts, matches);
    if (opts.flat) out.push(...(await listDir(opts.root, opts, matches)));
  }
  return byNewestEntry(out);
}
