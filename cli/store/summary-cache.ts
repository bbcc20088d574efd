// Per-project cache of what `list` shows about each session file, valid while the file's size and mtime are unchanged.
import { basename, dirname, join } from 'node:path';
import { readJsonOrNull, writeJsonAtomic } from './atomic-json.js';
import { cacheDir, cacheKey } from './paths.js';

const FORMAT = 2;

/**
 * One file's row: [size, mtimeMs, id, cwd, timestamp, name, messageCount]. A tuple rather than an object
 * because list parses 10,000 of them per run and arrays parse markedly faster than keyed objects.
 */
export type FileSummary = [size: number, mtimeMs: number, id: string, cwd: string, timestamp: string, name: string | null, messageCount: number | null];

export interface SummaryCache {
  format: number;
  dir: string;
  files: Record<string, FileSummary>;
}

function cachePath(dir: string): string {
  return join(cacheDir('list'), `${cacheKey(dir)}.json`);
}

export async function loadSummaries(dir: string): Promise<SummaryCache> {
  const v = await readJsonOrNull<SummaryCache>(cachePath(dir));
  // Missing or unreadable: start empty; every row is rechecked against its file anyway.
  if (v && v.format === FORMAT && v.dir === dir && typeof v.files === 'object' && v.files !== null) return v;
  return { format: FORMAT, dir, files: {} };
}

/** Atomic save (temp + rename); concurrent listers may overwrite each other, which costs only a re-read later. */
export async function saveSummaries(cache: SummaryCache): Promise<void> {
  await writeJsonAtomic(cachePath(cache.dir), cache);
}

/** Drops one file's row so the next list re-reads its header and the append cache's count (after a resume warmed it). */
export async function forgetSummary(path: string): Promise<void> {
  const cache = await loadSummaries(dirname(path));
  const name = basename(path);
  if (!(name in cache.files)) return;
  delete cache.files[name];
  await saveSummaries(cache);
}
