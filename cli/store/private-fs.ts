// What sessync creates is its owner's alone: folders 0700, session, state and cache files 0600, whatever the umask.
import { mkdirSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Mode of every file sessync creates (session files, sync state, caches, locks, backups). */
export const PRIVATE_FILE = 0o600;
/** Mode of every folder sessync creates, SESSYNC_HOME itself included. */
export const PRIVATE_DIR = 0o700;

/**
 * mkdir -p where every folder it creates is 0700. Folders that exist keep their mode: they are the user's
 * (or pi's, with --sessions-dir), and sessync does not change what it did not make. Returns the folders it made,
 * deepest first, as mkdirPrivateSync does.
 */
export async function mkdirPrivate(dir: string): Promise<string[]> {
  let first: string | undefined;
  try {
    first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  } catch (e) {
    throw mkdirCause(e, dir);
  }
  return first === undefined ? [] : madeBetween(dir, first);
}

/**
 * mkdirPrivate for a caller that keeps its page-cache calls off the thread pool (session-writer's new files).
 * Returns the folders it made, deepest first (none when `dir` was there): each one's name in its parent is what a
 * caller that needs the folder to survive a power cut must fsync (the parent of each).
 */
export function mkdirPrivateSync(dir: string): string[] {
  let first: string | undefined;
  try {
    first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  } catch (e) {
    throw mkdirCause(e, dir);
  }
  return first === undefined ? [] : madeBetween(dir, first);
}

/**
 * Node's recursive mkdir answers ENOENT where a folder could not be made for another reason (a read-only mount, a
 * full disk: nodejs/node#47098, #42808), and the user would be told to create a folder that cannot be. The first
 * missing folder made on its own says the real errno; the ENOENT stays when that one is made (a race) or is missing
 * too. Synchronous: only on this failure path, a few calls.
 */
function mkdirCause(e: unknown, dir: string): unknown {
  if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return e;
  let d = dir;
  while (dirname(d) !== d && !reachable(dirname(d))) d = dirname(d);
  try {
    mkdirSync(d, { mode: PRIVATE_DIR });
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
