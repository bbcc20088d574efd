// Which folders' names in their parents this process has made durable, and the bounded walk that finds the rest.
import { closeSync, fstatSync, openSync, statSync, type Stats } from 'node:fs';
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
 * ext3, ext4 with 128-byte inodes, folders a disk image was made with) it reads 0, and the inode number alone cannot
 * tell a folder made again from the old one: such a folder counts as the one remembered only while this process
 * holds it open (see held).
 */
function folderId(st: Stats): string {
  return st.birthtimeMs === 0 ? `${st.dev}:${st.ino}:open` : `${st.ino}:${st.birthtimeMs}`;
}

/**
 * Folders without a birth time that are remembered, each held open, least recently used first. An open folder's
 * inode is not freed when the folder is removed, so a folder made again in its place gets another number: the held
 * one still matching the path's stat, and still linked, is the same folder. Bounded; one let go is walked again.
 */
const held = new Map<string, number>();
const HELD_MAX = 256;

/** Whether `d` (whose stat is `st`) is the folder remembered as `id`. */
function isSame(d: string, st: Stats, id: string | undefined): boolean {
  if (id === undefined || id !== folderId(st)) return false;
  if (st.birthtimeMs !== 0) return true;
  const fd = held.get(d);
  if (fd === undefined || !holds(fd, st)) {
    letGo(d);
    return false;
  }
  held.delete(d);
  held.set(d, fd); // the most recently used
  return true;
}

/**
 * Whether the open folder `fd` is the one `st` describes and still linked. */
function holds(fd: number, st: Stats): boolean {
  try {
    const h = fstatSync(fd);
    return h.nlink > 0 && h.ino === st.ino && h.dev === st.dev;
  } catch {
    return false; // our own descriptor unusable: the folder is walked again, which skips nothing
  }
}

/** Remembers `d` (stat `st`) in `map`; one without a birth time only if it can be held open, else it is walked again. */
function remember(map: Map<string, string>, d: string, st: Stats): void {
  if (st.birthtimeMs === 0 && !hold(d, st)) return;
  map.set(d, folderId(st));
}

/**
 * `d` held open, checked to be the folder `st` describes. Called before the caller starts its parent's fsync, so the
 * folder held is one that fsync covers. A folder that cannot be opened (no permission, no descriptors left) is only
 * not remembered: the cost is a walk, never a skipped fsync.
 */
function hold(d: string, st: Stats): boolean {
  const had = held.get(d);
  if (had !== undefined) {
    if (holds(had, st)) return true;
    letGo(d);
  }
  let fd: number;
  try {
    fd = openSync(d, 'r');
  } catch {
    return false; // not remembered: walked again next time, which skips nothing
  }
  if (!holds(fd, st)) {
    closeSync(fd);
    return false;
  }
  held.set(d, fd);
  if (held.size > HELD_MAX) letGo(held.keys().next().value!);
  return true;
}

function letGo(d: string): void {
  const fd = held.get(d);
  if (fd === undefined) return;
  held.delete(d);
  named.delete(d);
  walked.delete(d);
  closeSync(fd);
}

/**
 * Folders this process made (mkdirPrivate's answer), before the caller starts their parents' fsyncs: all or none
 * (a folder a pruner removed at once makes a stat throw before any is marked; nothing after the stats throws).
 */
export function noteNamed(made: readonly string[]): void {
  const stats = made.map((d) => [resolve(d), statSync(d)] as const);
  for (const [d, st] of stats) remember(named, d, st);
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
  if (known !== undefined && isSame(start, statSync(start), known)) return [];
  const stop = resolve(top());
  const last = start === stop || start.startsWith(stop.endsWith(sep) ? stop : stop + sep) ? stop : start;
  const out: [string, Stats][] = [];
  const seen: [string, Stats][] = [];
  for (let d = start; ; d = dirname(d)) {
    const st = statSync(d);
    seen.push([d, st]);
    const up = dirname(d);
    if (up === d) break; // the file system's root has no parent to hold its name
    if (!isSame(d, st, named.get(d))) {
      if (st.dev !== statSync(up).dev) break;
      out.push([d, st]);
    }
    if (d === last) break;
  }
  // Marked once the whole walk has stood (a stat above that throws leaves none marked whose parent goes unsynced);
  // the caller starts the fsyncs before anything else runs.
  for (const [d, st] of out) remember(named, d, st);
  for (const [d, st] of seen) remember(walked, d, st);
  return out.map(([d]) => d);
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
