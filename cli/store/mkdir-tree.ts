// mkdir -p that says why a folder could not be made (a read-only mount, a full disk), not the ENOENT Node's recursive mkdir answers.
import { mkdirSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * mkdir -p of `dir`; the folders it creates get `mode` (under the umask; Node's default 0777 when none is given) and
 * folders that exist keep theirs. Returns the folders it made, deepest first (none when `dir` was there). A failure is
 * the errno of the first folder that could not be made, with that folder as its path.
 */
export async function mkdirTree(dir: string, mode?: number): Promise<string[]> {
  let first: string | undefined;
  try {
    first = await mkdir(dir, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  } catch (e) {
    throw mkdirCause(e, dir, mode);
  }
  return first === undefined ? [] : madeBetween(dir, first);
}

/** mkdirTree for a caller that keeps its page-cache calls off the thread pool. */
export function mkdirTreeSync(dir: string, mode?: number): string[] {
  let first: string | undefined;
  try {
    first = mkdirSync(dir, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  } catch (e) {
    throw mkdirCause(e, dir, mode);
  }
  return first === undefined ? [] : madeBetween(dir, first);
}

/** The folders of `dir`'s path that do not exist now, deepest first: what mkdirTree(dir) would make. */
export function missingFolders(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; dirname(d) !== d && !reachable(d); d = dirname(d)) out.push(d);
  return out;
}

/**
 * Node's recursive mkdir answers ENOENT where a folder could not be made for another reason (a read-only mount, a
 * full disk: nodejs/node#47098, #42808), and the user would be told to create a folder that cannot be. The first
 * missing folder made on its own says the real errno; the ENOENT stays when that one is made (a race) or is missing
 * too. Synchronous: only on this failure path, a few calls.
 */
function mkdirCause(e: unknown, dir: string, mode: number | undefined): unknown {
  if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return e;
  let d = dir;
  while (dirname(d) !== d && !reachable(dirname(d))) d = dirname(d);
  try {
    mkdirSync(d, mode === undefined ? {} : { mode });
  } catch (real) {
    return (real as NodeJS.ErrnoException).code === 'EEXIST' || (real as NodeJS.ErrnoException).code === 'ENOENT' ? e : real;
  }
  return e;
}

/** Whether `p` is there (or cannot be looked at, which the mkdir below it then reports). */
function reachable(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** `dir` and its ancestors up to `first` (the highest one mkdir -p made), deepest first. */
function madeBetween(dir: string, first: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push(d);
    if (d === first || dirname(d) === d) return out;
  }
}
