// Which folders' names in their parents this process has made durable, and the bounded walk that finds the rest.
import { statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { piSessionsHere, piSessionsRoot } from '../agents/pi-paths.js';
import { claudeMirrorRoot, claudeProjectsRoot } from '../agents/claude-paths.js';
import { codexMirrorRoot, codexSessionsRoot } from '../agents/codex-paths.js';
import { sessionsRoot, sessyncHome } from './paths.js';

/**
 * Folders whose names in their parents this process made durable or has an fsync under way for (made by its mkdir,
 * or vouched for by a walk). A folder found existing may still be new: made by a run killed before its parents'
 * fsyncs (or its journal's), by pi, or by another program, its name maybe only in the page cache.
 */
const named = new Set<string>();
/** Folders whose every folder up to the top of their walk is in `named`: a new file in one needs no walk. */
const walked = new Set<string>();

/** Folders this process made (mkdirPrivate's answer): their parents' fsyncs are the caller's, at once. */
export function noteNamed(made: readonly string[]): void {
  for (const d of made) named.add(resolve(d));
}

/**
 * The folders from `dir` up to `top()` (both included: the topmost name made durable is the top's own, in its
 * parent) whose names this process has not made durable yet, deepest first; from here on they count as named (the
 * caller fsyncs each one's parent). Once per folder per process: a folder walked before costs a set lookup. The walk
 * stops where the file system changes: a mount point's name lives in the file system below it, which this file
 * never touched. `top` is asked only when a walk is needed (finding the sessions root reads pi's settings).
 */
export function unnamedUpTo(dir: string, top: () => string): string[] {
  const start = resolve(dir);
  if (walked.has(start)) return [];
  const stop = resolve(top());
  const last = start === stop || start.startsWith(stop.endsWith(sep) ? stop : stop + sep) ? stop : start;
  const out: string[] = [];
  const seen: string[] = [];
  for (let d = start; ; d = dirname(d)) {
    seen.push(d);
    const up = dirname(d);
    if (up === d) break; // the file system's root has no parent to hold its name
    if (!named.has(d)) {
      if (statSync(d).dev !== statSync(up).dev) break;
      named.add(d);
      out.push(d);
    }
    if (d === last) break;
  }
  for (const d of seen) walked.add(d);
  return out;
}

/**
 * The sessions root a new session file in `dir` lives under: the deepest of the roots sessync knows (the one this
 * environment syncs, pi's, sessync's own store, Claude Code's and Codex's folders and sessync's mirrors of them)
 * that holds `dir`; `dir` itself when none does (only its own name is vouched for then).
 */
export function sessionsRootOf(dir: string, env: NodeJS.ProcessEnv): string {
  const d = resolve(dir);
  const roots = [sessionsRoot(env), piSessionsHere(env), piSessionsRoot(env), join(sessyncHome(env), 'sessions'), claudeMirrorRoot(env), codexMirrorRoot(env), claudeProjectsRoot(env), codexSessionsRoot(env)];
  let best: string | null = null;
  for (const r of roots) {
    if (!r) continue;
    const root = resolve(r);
    if ((d === root || d.startsWith(root.endsWith(sep) ? root : root + sep)) && (best === null || root.length > best.length)) best = root;
  }
  return best ?? d;
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
