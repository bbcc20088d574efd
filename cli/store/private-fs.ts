// What sessync creates is its owner's alone: folders 0700, session, state and cache files 0600, whatever the umask.
import { mkdirTree, mkdirTreeSync } from './mkdir-tree.js';

/** Mode of every file sessync creates (session files, sync state, caches, locks, backups). */
export const PRIVATE_FILE = 0o600;
/** Mode of every folder sessync creates, SESSYNC_HOME itself included. */
export const PRIVATE_DIR = 0o700;

/**
 * mkdir -p where every folder it creates is 0700. Folders that exist keep their mode: they are the user's
 * (or pi's, with --sessions-dir), and sessync does not change what it did not make. Returns the folders it made,
 * deepest first, as mkdirPrivateSync does. A failure names the first folder that could not be made and why (mkdirTree).
 */
export function mkdirPrivate(dir: string): Promise<string[]> {
  return mkdirTree(dir, PRIVATE_DIR);
}

/**
 * mkdirPrivate for a caller that keeps its page-cache calls off the thread pool (session-writer's new files).
 * Returns the folders it made, deepest first (none when `dir` was there): each one's name in its parent is what a
 * caller that needs the folder to survive a power cut must fsync (the parent of each).
 */
export function mkdirPrivateSync(dir: string): string[] {
  return mkdirTreeSync(dir, PRIVATE_DIR);
}
