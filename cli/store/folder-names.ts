// Which folders' names in their parents this process has made durable, and the bounded walk that finds the rest.
import { statSync, type Stats } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { piSessionsHere, piSessionsRoot } from '../agents/pi-paths.js';
import { claudeMirrorRoot, claudeProjectsRoot } from '../agents/claude-paths.js';
import { codexMirrorRoot, codexSessionsRoot } from '../agents/codex-paths.js';
import { sessionsRoot, sessyncHome } from './paths.js';

/**
 * Folders whose names in their parents this process made durable or has an fsync under way for (made by its mkdir,
 * or vouched for by a walk), each with its identity (folderId): a folder removed and made again (by pi, while a
 * `sync --watch` runs) is a new name. A folder found existing may still be new: made by a run killed before its
 * parents' fsyncs (or its journal's), by pi, or by another program, its name maybe only in the page cache.
 */
const named = new Map<string, string>();
/** Folders (with their identity) whose every folder up to the top of their walk is named: a file there needs no walk. */
const walked = new Map<string, string>();

/**
 * A folder's inode and birth time: a folder removed and made again at once often gets the same inode number back
 * (ext4 hands out the lowest free one), never the same birth time. Where the file system keeps no birth time (NFS,
 * ext3, ext4 with 128-byte inodes, folders a disk image was built with) it reads 0 and the inode alone cannot tell a
 * folder made again from the old one: null, and such a folder is never remembered (its parent is fsynced for every
 * new file under it: one fsync more per file there, against a folder name lost in a power cut).
 */
function folderId(st: Stats): string | null {
  return st.birthtimeMs === 0 ? null : `${st.ino}:${st.birthtimeMs}`;
}

/**
 * Folders this process made (mkdirPrivate's answer), their parents' fsyncs already started by the caller: marked only
 * after that, and all or none (a folder a pruner removed at once makes the stat throw before any is marked).
 */
export function noteNamed(made: readonly string[]): void {
  const ids = made.map((d) => [resolve(d), folderId(statSync(d))] as const);
  for (const [d, id] of ids) if (id !== null) named.set(d, id);
}

/**
 * The folders from `dir` up to `top()` (both included: the topmost name made durable is the top's own, in its
 * parent) whose names this process has not made durable yet, deepest first; from here on they count as named (the
 * caller fsyncs each one's parent). Once per folder per process: a folder walked before costs a set lookup and a
 * stat. The walk stops where the file system changes: a mount point's name lives in the file system below it, which
 * this file never touched. `top` is asked only when a walk is needed (finding the sessions root reads pi's settings).
 */
export function unnamedUpTo(dir: string, top: () => string): string[] {
  const start = resolve(dir);
  const known = walked.get(start);
  if (known !== undefined && known === folderId(statSync(start))) return [];
  const stop = resolve(top());
  const last = start === stop || start.startsWith(stop.endsWith(sep) ? stop : stop + sep) ? stop : start;
  const out: string[] = [];
  const seen: [string, string | null][] = [];
  for (let d = start; ; d = dirname(d)) {
    const st = statSync(d);
    const id = folderId(st);
    seen.push([d, id]);
    const up = dirname(d);
    if (up === d) break; // the file system's root has no parent to hold its name
    if (id === null || named.get(d) !== id) {
      if (st.dev !== statSync(up).dev) break;
      out.push(d);
    }
    if (d === last) break;
  }
  // Marked once the whole walk has stood (a stat above that throws leaves none marked whose parent goes unsynced);
  // the caller starts the fsyncs before anything else runs. A folder without a birth time is never marked.
  const ids = new Map(seen);
  for (const d of out) {
    const id = ids.get(d);
    if (id != null) named.set(d, id);
  }
  for (const [d, id] of seen) if (id !== null) walked.set(d, id);
  return out;
}

/**
 * The sessions root a new session file in `dir` lives under: the deepest of the roots sessync knows (the one this
 * environment syncs, pi's, sessync's own store, Claude Code's and Codex's folders and sessync's mirrors of them)
 * that holds `dir`; `dir` itself when none does (only its own name is vouched for then).
 */
export function sessionsRootOf(dir: string, env: NodeJS.ProcessEnv): string {
  const d = resolve(dir);
  const lookups = [() => sessionsRoot(env), () => piSessionsHere(env), () => piSessionsRoot(env), () => join(sessyncHome(env), 'sessions'), () => claudeMirrorRoot(env), () => codexMirrorRoot(env), () => claudeProjectsRoot(env), () => codexSessionsRoot(env)];
  let best: string | null = null;
  for (const lookup of lookups) {
    const r = rootOrNone(lookup);
    if (!r) continue;
    const root = resolve(r);
    if ((d === root || d.startsWith(root.endsWith(sep) ? root : root + sep)) && (best === null || root.length > best.length)) best = root;
  }
  return best ?? d;
}

/**
 * A root lookup that throws (pi's folder this user cannot search: `~/.pi` of another user, a locked sessionDir) names
 * no root: no file this process writes can be under a folder it cannot search, and failing here would stop every new
 * session file, Claude Code's, Codex's and sessync's own included. pi's own commands still report that folder.
 */
function rootOrNone(lookup: () => string | null | undefined): string | null {
  try {
    return lookup() ?? null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException | null)?.code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'ELOOP') return null;
    throw e;
  }
}

/**
 * Errors of a folder's open or fsync that say this process can never fsync it, not that data failed to reach the
 * disk: no read permission on it (EACCES, EPERM; a home under a folder only root may list), or a platform or file
 * system without folder fsync (EISDIR, EPERM on Windows; EINVAL). The worker's file store skips the same.
 */
export function cannotFsyncFolder(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EISDIR' || code === 'EINVAL';
}
