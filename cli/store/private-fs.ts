// What sessync creates is its owner's alone: folders 0700, session, state and cache files 0600, whatever the umask.
import { mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';

/** Mode of every file sessync creates (session files, sync state, caches, locks, backups). */
export const PRIVATE_FILE = 0o600;
/** Mode of every folder sessync creates, SESSYNC_HOME itself included. */
export const PRIVATE_DIR = 0o700;

/**
 * mkdir -p where every folder it creates is 0700. Folders that exist keep their mode: they are the user's
 * (or pi's, with --sessions-dir), and sessync does not change what it did not make.
 */
export async function mkdirPrivate(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
}

/** mkdirPrivate for a caller that keeps its page-cache calls off the thread pool (session-writer's new files). */
export function mkdirPrivateSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
}
