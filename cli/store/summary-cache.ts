// Per-project cache of what `list` shows about each session file, valid while the file's size and mtime are unchanged.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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
  try {
    const v = JSON.parse(await readFile(cachePath(dir), 'utf8')) as SummaryCache;
    if (v.format === FORMAT && v.dir === dir && typeof v.files === 'object' && v.files !== null) return v;
  } catch {
    // Missing or unreadable: start empty; every entry is rechecked against its file anyway.
  }
  return { format: FORMAT, dir, files: {} };
}

/** Atomic save (temp + rename); concurrent listers may overwrite each other, which costs only a re-read later. */
export async function saveSummaries(cache: SummaryCache): Promise<void> {
  const file = cachePath(cache.dir);
  await mkdir(join(file, '..'), { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify(cache));
  await rename(tmp, file);
}
