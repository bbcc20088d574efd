// The one place sessync rewrites a Codex rollout: its continuation here moves into a fork rollout, and the rollout is
// made equal to the server's. The pre-move file is kept as a backup until the fork and the rewrite are durable.
import { copyFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { mkdirTree } from '../store/mkdir-tree.js';
import { sessyncHome } from '../store/paths.js';
import { mkdirPrivate } from '../store/private-fs.js';
import { fsyncPath, writeTemp } from '../store/session-writer.js';

/** Where the pre-move copy of a session's rollout is kept while it is moved (sessync's folder, never Codex's). */
export function codexBackupPath(env: NodeJS.ProcessEnv, session: string): string {
  return join(sessyncHome(env), 'agents', 'codex', 'backups', `${session}.jsonl`);
}

/** Test hook: SESSYNC_CODEX_CRASH_AT=<step> kills the process with SIGKILL there, to prove a crash loses nothing. */
function crashPoint(env: NodeJS.ProcessEnv, step: string): void {
  if (env.SESSYNC_CODEX_CRASH_AT === step) process.kill(process.pid, 'SIGKILL');
}

/** Writes a whole file durably: temp, fsync, rename over, fsync of the folder. */
export async function writeWholeFile(path: string, text: string): Promise<void> {
  await mkdirTree(dirname(path), 0o700); // the mode these folders have always been made with
  const tmp = await writeTemp(path, text);
  await rename(tmp, path);
  await fsyncPath(dirname(path));
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Moves: backup of `rollout` -> each fork written (skipped when already there) -> `rollout` rewritten -> backup removed.
 * Killed at any point, a rerun finds the rollout either as it was (with its backup) or already rewritten, and every
 * line is in the rollout, a fork, the backup or the mirror.
 */
export async function moveIntoForks(env: NodeJS.ProcessEnv, session: string, rollout: string, keep: string, forks: { path: string; text: string }[]): Promise<void> {
  const backup = codexBackupPath(env, session);
  await mkdirPrivate(dirname(backup));
  if (!(await exists(backup))) {
    const tmp = `${backup}.${process.pid}.tmp`;
    await copyFile(rollout, tmp);
    await fsyncPath(tmp);
    await rename(tmp, backup);
    await fsyncPath(dirname(backup));
  }
  crashPoint(env, 'after-backup');
  for (const f of forks) if (!(await exists(f.path))) await writeWholeFile(f.path, f.text);
  crashPoint(env, 'after-forks');
  await writeWholeFile(rollout, keep);
  crashPoint(env, 'after-rewrite');
  await unlink(backup);
}
