// mkdir -p that says why a folder could not be made (a read-only mount, a full disk), not the ENOENT Node's recursive mkdir answers.
import { lstatSync, mkdirSync, readlinkSync, statSync } from 'node:fs';
import { SessyncError } from '../../shared/errors.js';
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

/**
 * The folders of `dir`'s path that do not exist now, deepest first: what mkdirTree(dir) would make. A symbolic link
 * is never missing, even one to nowhere (a folder on a drive not mounted): it is the user's, never made or removed here.
 */
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
  // A link to nowhere on the path (a folder on a drive not mounted) is said as such: Node answers ENOENT or ENOTDIR.
  let there = dir;
  while (dirname(there) !== there && !reachable(there)) there = dirname(there);
  const link = danglingLink(there);
  if (link !== null) {
    return new SessyncError('not_found', `cannot create the folder ${dir}: ${there} is a symbolic link to ${link}, which does not exist. Mount or create ${link}, then retry`, {
      details: { errno: (e as NodeJS.ErrnoException).code, syscall: 'mkdir', path: dir },
      cause: e,
    });
  }
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

/** Where `p` points when it is a symbolic link whose target is missing; null otherwise (or when that cannot be told). */
function danglingLink(p: string): string | null {
  try {
    if (!lstatSync(p).isSymbolicLink()) return null;
    statSync(p);
    return null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return null; // the mkdir's own errno says it then
    try {
      return readlinkSync(p);
    } catch {
      return null; // gone or changed meanwhile: the mkdir's ENOENT stands, nothing is lost
    }
  }
}

/** Whether `p` is there, a symbolic link included (or cannot be looked at, which the mkdir below it then reports). */
function reachable(p: string): boolean {
  try {
    lstatSync(p);
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
