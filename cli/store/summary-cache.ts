// Per-project cache of what `list` shows about each session file, valid while the file's size and mtime are unchanged.
import { readJsonOrNull, writeJsonAtomic } from './atomic-json.js';
import { join } from 'node:path';
import { cacheDir, cacheKey } from './paths.js';

const FORMAT = 1;

export interface FileSummary {
  size: number;
  mtimeMs: number;
  id: string;
  cwd: string;
  timestamp: string;
  name?: string;
  messageCount?: number;
}

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
  // Missing or unreadable: start empty; every entry is rechecked against its file anyway.
  if (v && v.format === FORMAT && v.dir === dir && typeof v.files === 'object' && v.files !== null) return v;
  return { format: FORMAT, dir, files: {} };
}

/** Atomic save (temp + rename); concurrent listers may overwrite each other, which costs only a re-read later. */
export async function saveSummaries(cache: SummaryCache): Promise<void> {
  await writeJsonAtomic(cachePath(cache.dir), cache);
}
