// pi's own choice of sessions folder, read as pi reads it: $PI_CODING_AGENT_SESSION_DIR, else `sessionDir` in its settings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PiSessionDir {
  /** The folder pi writes sessions of every project into, flat (no per-project folders), or null: pi's default. */
  dir: string | null;
  /** Why pi's settings file could not be used (the default folder is used then); pi itself ignores such a file too. */
  problem?: string;
}

/** A leading ~ as pi expands it (config.js expandTildePath, settings-manager getSessionDir). */
function expandTilde(path: string, home: string): string {
  if (path === '~') return home;
  return path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

/**
 * pi (main.js): `--session-dir`, else $PI_CODING_AGENT_SESSION_DIR, else `sessionDir` of `<agent dir>/settings.json`.
 * With one set, pi keeps every project's sessions directly in that folder. Read on every call, like pi's folder.
 */
export function piSessionDir(env: NodeJS.ProcessEnv, agentDir: string, home: string): PiSessionDir {
  const fromEnv = env.PI_CODING_AGENT_SESSION_DIR;
  if (fromEnv) return { dir: expandTilde(fromEnv, home) };
  const file = join(agentDir, 'settings.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { dir: null };
    return { dir: null, problem: `pi's settings ${file} cannot be read (${code ?? String(e)}); using pi's default sessions folder` };
  }
  if (text.trim() === '') return { dir: null };
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (e) {
    return { dir: null, problem: `pi's settings ${file} are not JSON (${(e as Error).message}); using pi's default sessions folder` };
  }
  const value = settings && typeof settings === 'object' ? (settings as { sessionDir?: unknown }).sessionDir : undefined;
  if (value === undefined || value === null || value === '') return { dir: null };
  if (typeof value !== 'string') return { dir: null, problem: `pi's settings ${file}: sessionDir is not a string; using pi's default sessions folder` };
  return { dir: expandTilde(value, home) };
}
