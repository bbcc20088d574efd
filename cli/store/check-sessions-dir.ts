// A sessions folder the user names (--sessions-dir, SESSYNC_SESSIONS_DIR) must exist for a command that uses it: a typo is refused, never created.
import { statSync } from 'node:fs';
import { SessyncError } from '../../shared/errors.js';
import type { SessionsUse } from '../command.js';

interface Named {
  dir: string;
  source: string;
}

function namedDir(flag: string | undefined, env: NodeJS.ProcessEnv): Named | null {
  if (flag !== undefined) return { dir: flag, source: '--sessions-dir' };
  return env.SESSYNC_SESSIONS_DIR ? { dir: env.SESSYNC_SESSIONS_DIR, source: 'SESSYNC_SESSIONS_DIR' } : null;
}

/** An empty `--sessions-dir=` is a missing value whatever the command: it never means the default folder. */
export function checkSessionsDirValue(flag: string | undefined): void {
  if (flag === '') throw new SessyncError('bad_input', 'option --sessions-dir needs a value: the folder that holds the session files');
}

/**
 * Checks a named sessions folder for a command that uses it (see Command.usesSessions), before the command runs, so a
 * typo'd path makes nothing (sessync would otherwise create the whole path and write a session where no one looks).
 * A missing folder is refused for 'needs'; for 'lists' it holds no sessions yet, and the note to say is returned (a
 * listing of pi's folder before pi's first session is empty, not an error). A file, or a path through one, is refused
 * for both. Only a folder named by the user is checked: pi's default folder and sessync's own are created as needed.
 * Other stat failures (a folder that cannot be read) are thrown as they are, for the fs error mapping to name.
 */
export function checkSessionsDir(flag: string | undefined, env: NodeJS.ProcessEnv, use: SessionsUse): string | null {
  checkSessionsDirValue(flag);
  const named = namedDir(flag, env);
  if (!named) return null;
  let isDir: boolean;
  try {
    const st = statSync(named.dir, { throwIfNoEntry: false });
    if (!st) {
      if (use === 'lists') return `${named.source} ${named.dir} does not exist, so it holds no sessions yet (create it with mkdir -p ${named.dir}, or fix the path)`;
      throw missing(named);
    }
    isDir = st.isDirectory();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new SessyncError('bad_input', `${named.source} ${named.dir} cannot be a folder: a part of its path is a file. Fix the path.`);
    }
    throw e;
  }
  if (!isDir) throw new SessyncError('bad_input', `${named.source} ${named.dir} is not a folder: name the folder that holds the session files`);
  return null;
}

function missing(named: Named): SessyncError {
  return new SessyncError('bad_input', `${named.source} ${named.dir} does not exist: create it first (mkdir -p ${named.dir}) if that is the folder you meant, or fix the path. Nothing was written.`);
}
