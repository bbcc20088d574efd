// A sessions folder the user names (--sessions-dir, SESSYNC_SESSIONS_DIR) must exist: a typo is refused, never created.
import { statSync } from 'node:fs';
import { SessyncError } from '../../shared/errors.js';

/**
 * Refuses a named sessions folder that is missing or not a folder, before the command runs, so a typo'd path makes
 * nothing (sessync would otherwise create the whole path and write a session where no one looks). Only a folder named
 * by the user is checked: pi's default folder and sessync's own are created as needed. Other stat failures (a folder
 * that cannot be read) are thrown as they are, for the fs error mapping to name.
 */
export function checkSessionsDir(flag: string | undefined, env: NodeJS.ProcessEnv): void {
  const named = flag !== undefined ? { dir: flag, source: '--sessions-dir' } : env.SESSYNC_SESSIONS_DIR ? { dir: env.SESSYNC_SESSIONS_DIR, source: 'SESSYNC_SESSIONS_DIR' } : null;
  if (!named) return;
  if (named.dir === '') throw new SessyncError('bad_input', 'option --sessions-dir needs a value: the folder that holds the session files');
  let isDir: boolean;
  try {
    const st = statSync(named.dir, { throwIfNoEntry: false });
    if (!st) throw missing(named.source, named.dir);
    isDir = st.isDirectory();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new SessyncError('bad_input', `${named.source} ${named.dir} cannot be a folder: a part of its path is a file. Fix the path.`);
    }
    throw e;
  }
  if (!isDir) throw new SessyncError('bad_input', `${named.source} ${named.dir} is not a folder: name the folder that holds the session files`);
}

function missing(source: string, dir: string): SessyncError {
  return new SessyncError('bad_input', `${source} ${dir} does not exist: create it first (mkdir -p ${dir}) if that is the folder you meant, or fix the path. Nothing was written.`);
}
