// Where sessions live on disk: sessync's home, the sessions root, and pi's per-project folder layout.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { realpath } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { SessyncError } from '../../shared/errors.js';
import { piSessionsHere } from '../agents/pi-paths.js';

/** $SESSYNC_HOME or ~/.sessync. */
export function sessyncHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.SESSYNC_HOME && env.SESSYNC_HOME.length > 0 ? env.SESSYNC_HOME : join(homedir(), '.sessync');
}

/**
 * $SESSYNC_SESSIONS_DIR (set by --sessions-dir too), else pi's own sessions folder when pi is set up here
 * ($PI_CODING_AGENT_DIR, else ~/.pi/agent), else <home>/sessions. pi's folder has the same layout as sessync's store.
 */
export function sessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SESSYNC_SESSIONS_DIR && env.SESSYNC_SESSIONS_DIR.length > 0) return env.SESSYNC_SESSIONS_DIR;
  return piSessionsHere(env) ?? join(sessyncHome(env), 'sessions');
}

/** Caches sessync keeps beside (never inside) the session files. */
export function cacheDir(kind: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(sessyncHome(env), 'cache', kind);
}

/** A short stable file name for a cache keyed by an absolute path. */
export function cacheKey(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 32);
}

/** pi's folder name for a cwd: `--${cwd minus leading slash, with / \ : replaced by ->--`. Lossy: the header's cwd is the truth. */
export function encodeCwd(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}

/** Longest folder name most file systems take (bytes). */
const MAX_NAME_BYTES = 255;

/**
 * The project's folder. A name past MAX_NAME_BYTES (a deep project path) could not be created at all: it is cut and
 * a hash of the whole cwd added, so it exists and stays apart from other long paths. Shorter names are pi's, unchanged.
 */
export function projectDir(root: string, realCwd: string): string {
  const name = encodeCwd(realCwd);
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return join(root, name);
  let cut = name.slice(0, 200);
  while (Buffer.byteLength(cut) > 200) cut = cut.slice(0, -1);
  return join(root, `${cut}-${createHash('sha256').update(realCwd).digest('hex').slice(0, 16)}--`);
}

/**
 * pi's file name: the ISO time with : and . as -, then _<id>.jsonl. The timestamp may come from another machine's
 * header (pull), so anything but letters, digits and - becomes - (a / or \ would nest folders that list never
 * sees; an _ would move where idFromFileName finds the id), and it is capped so the name stays under 255 bytes.
 * For an ISO timestamp this is exactly pi's name.
 */
export function sessionFileName(timestamp: string, id: string): string {
  const time = timestamp.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64);
  return `${time}_${id}.jsonl`;
}

/** The session id a file name carries (pi's layout), or null for other names. */
export function idFromFileName(name: string): string | null {
  if (!name.endsWith('.jsonl')) return null;
  const us = name.indexOf('_');
  return us < 0 ? null : name.slice(us + 1, -'.jsonl'.length) || null;
}

/** realpath-normalised cwd, so a symlinked project folder maps to the same sessions as its real path. */
export async function realCwd(cwd: string): Promise<string> {
  try {
    return await realpath(cwd);
  } catch (e) {
    throw new SessyncError('not_found', `project folder ${cwd} does not exist or cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
}
