// Per-project cache of what `list` shows about each session file, valid while the file's size and mtime are unchanged.
import { basename, dirname, join } from 'node:path';
import { readJsonOrNull, writeJsonAtomic } from './atomic-json.js';
import { cacheDir, cacheKey } from './paths.js';
import { saveCache } from './cache-save.js';

/**
 * 5: rows of 4 said 0 messages for every Claude Code and Codex session; 6: rows of 5 said "" as the newest entry time of
 * Claude Code files ending in lines without a time (last-prompt, cost-state). Their files are read again once.
 */
const FORMAT = 6;

/**
 * One file's row. A list of tuples rather than an object keyed by file name: list parses 10,000
 * of them per run, and JSON.parse makes arrays markedly faster than an object with 10,000 keys.
 */
export type SummaryRow = [file: string, size: number, mtimeMs: number, id: string, cwd: string, timestamp: string, name: string | null, messageCount: number | null, lastEntryAt: string | null];

export interface SummaryCache {
  format: number;
  dir: string;
  /** In the order the last list saw the files. */
  rows: SummaryRow[];
}

/** Under the run's home (`env`), as the tail state is. */
function cachePath(dir: string, env: NodeJS.ProcessEnv): string {
  return join(cacheDir('list', env), `${cacheKey(dir)}.json`);
}

export async function loadSummaries(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<SummaryCache> {
  const v = await readJsonOrNull<SummaryCache>(cachePath(dir, env));
  // Missing, unreadable or of another format: start empty; every row is rechecked against its file anyway.
  if (v && v.format === FORMAT && v.dir === dir && Array.isArray(v.rows)) {
    return { format: FORMAT, dir, rows: v.rows.filter((r) => Array.isArray(r) && typeof r[0] === 'string') };
  }
  return { format: FORMAT, dir, rows: [] };
}

/** Atomic save (temp + rename); concurrent listers may overwrite each other, which costs only a re-read later. */
export async function saveSummaries(cache: SummaryCache, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await writeJsonAtomic(cachePath(cache.dir, env), cache);
}

/**
 * Rows by file name. Rows are saved in listing order and a directory lists in a stable order, so
 * the next list's i-th file is nearly always row i: no index is built unless that guess misses.
 */
export class SummaryLookup {
  private byName: Map<string, SummaryRow> | null = null;

  constructor(private readonly rows: readonly SummaryRow[]) {}

  get(file: string, position: number): SummaryRow | undefined {
    const guess = this.rows[position];
    if (guess !== undefined && guess[0] === file) return guess;
    this.byName ??= new Map(this.rows.map((r) => [r[0], r]));
    return this.byName.get(file);
  }
}

/** Drops one file's row so the next list re-reads its header and the append cache's count (after a resume warmed it). */
export async function forgetSummary(path: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cache = await loadSummaries(dirname(path), env);
  const name = basename(path);
  const rows = cache.rows.filter((r) => r[0] !== name);
  if (rows.length === cache.rows.length) return;
  await saveCache('list', saveSummaries({ ...cache, rows }, env));
}
