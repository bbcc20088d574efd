// Node file-system errors (errno code, syscall, path) as SessyncErrors a user can act on: what failed, where, what to do.
import { dirname } from 'node:path';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import type { ErrorCode } from '../shared/errors.js';

/** What a Node fs call throws: the errno's name, the call and the path(s) it was given (none for fd calls). */
export interface ErrnoLike {
  code: string;
  syscall?: string;
  path?: string;
  dest?: string;
  message?: string;
}

interface Mapping {
  code: ErrorCode;
  retryable: boolean;
  /** Why it failed and what to do, after "cannot <op> <path>: "; `dir`: the path's folder, for the command to run. */
  text: (dir: string) => string;
}

/**
 * Errno names this CLI can explain. Retryable: only where the cause can pass without anyone changing the path itself
 * (space freed, files closed, a holder gone); a refused permission or a read-only mount stays so until someone acts.
 */
const MAPPINGS: Readonly<Record<string, Mapping>> = {
  EACCES: { code: 'fs_permission', retryable: false, text: (d) => `permission denied. Check the owner and mode of it and of its folder (ls -ld ${d}), or run sessync as the user who owns them` },
  EPERM: { code: 'fs_permission', retryable: false, text: (d) => `operation not permitted. Check the owner, mode and attributes (lsattr) of it and of its folder ${d}, or run sessync as the user who owns them` },
  EROFS: { code: 'fs_readonly', retryable: false, text: () => `its file system is read-only. Remount it read-write, or point SESSYNC_HOME / --sessions-dir at a writable folder` },
  ENOSPC: { code: 'fs_full', retryable: true, text: (d) => `no space left on its device. Free some space there (df -h ${d}), then retry` },
  EDQUOT: { code: 'fs_full', retryable: true, text: (d) => `this user's disk quota is used up on its file system. Free some space there (quota -s; du -sh ${d}), then retry` },
  EMFILE: { code: 'fs_limit', retryable: true, text: () => `this process has too many files open. Retry; if it keeps failing, raise the limit (ulimit -n)` },
  ENFILE: { code: 'fs_limit', retryable: true, text: () => `the system has too many files open. Close some programs, then retry` },
  EAGAIN: { code: 'fs_busy', retryable: true, text: () => `the resource is temporarily unavailable. Retry in a moment` },
  EBUSY: { code: 'fs_busy', retryable: true, text: () => `it is busy (in use by another program, or a mount point). Retry once it is released` },
  ETXTBSY: { code: 'fs_busy', retryable: true, text: () => `it is in use by a running program. Retry once that has exited` },
  EIO: { code: 'fs_io', retryable: false, text: () => `input/output error on its device. The disk or network file system may be failing: check it (dmesg) before retrying` },
  ENOTDIR: { code: 'fs_bad_path', retryable: false, text: () => `a part of the path is a file where a folder is expected. Move that file away or choose another path` },
  EISDIR: { code: 'fs_bad_path', retryable: false, text: () => `it is a folder where a file is expected. Move that folder away or choose another path` },
  ELOOP: { code: 'fs_bad_path', retryable: false, text: () => `the path goes through a symbolic link that loops (or a link where none is allowed). Fix the links on it` },
  ENAMETOOLONG: { code: 'fs_bad_path', retryable: false, text: () => `the path is too long for the file system. Choose a shorter folder` },
  ENOENT: { code: 'not_found', retryable: false, text: () => `it (or a folder above it) does not exist. Check the path, or create the folder` },
};

/** The verb of each syscall Node names, as a user says it. */
const OPERATIONS: Readonly<Record<string, string>> = {
  open: 'open',
  read: 'read',
  write: 'write to',
  writev: 'write to',
  fsync: 'sync',
  fdatasync: 'sync',
  close: 'close',
  mkdir: 'create the folder',
  mkdtemp: 'create a folder in',
  rmdir: 'remove the folder',
  unlink: 'remove',
  rm: 'remove',
  rename: 'rename',
  link: 'link',
  symlink: 'link',
  copyfile: 'copy',
  scandir: 'list the folder',
  opendir: 'list the folder',
  stat: 'look at',
  lstat: 'look at',
  fstat: 'look at',
  access: 'look at',
  realpath: 'resolve',
  readlink: 'read the link',
  chmod: 'change the mode of',
  fchmod: 'change the mode of',
  chown: 'change the owner of',
  ftruncate: 'truncate',
  truncate: 'truncate',
  utime: 'set the times of',
  futime: 'set the times of',
};

/** Whether `e` looks like what Node's fs throws: an Error with a string errno name such as 'EACCES'. */
export function isErrnoError(e: unknown): e is Error & ErrnoLike {
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code);
}

/**
 * `e` (a Node fs error) as a SessyncError; `fallbackPath` names the file for calls on a descriptor, which carry no path.
 * Known errno names get their own code and advice, without a stack; others are `fs_error` and name the errno, the
 * call and the path, with the stack (a bug report needs it). Anything else is returned unchanged.
 */
export function fsError(e: unknown, fallbackPath?: string): unknown {
  if (isSessyncError(e) || !isErrnoError(e)) return e;
  const path = e.path ?? fallbackPath;
  const shown = path === undefined ? 'a file' : e.dest === undefined ? path : `${path} to ${e.dest}`;
  const op = e.syscall === undefined ? 'use' : (OPERATIONS[e.syscall] ?? e.syscall);
  const details = { errno: e.code, ...(e.syscall === undefined ? {} : { syscall: e.syscall }), ...(path === undefined ? {} : { path }), ...(e.dest === undefined ? {} : { dest: e.dest }) };
  const m = Object.hasOwn(MAPPINGS, e.code) ? MAPPINGS[e.code]! : undefined;
  if (m) return new SessyncError(m.code, `cannot ${op} ${shown}: ${m.text(path === undefined ? '<its folder>' : dirname(path))} (${e.code})`, { retryable: m.retryable, details, cause: e });
  // Its own code, not `internal`: a sync run goes on with its other sessions, as for any one session's fs failure.
  return new SessyncError('fs_error', `unexpected file-system error ${e.code} trying to ${op} ${shown}: ${e.stack ?? e.message}`, { details, cause: e });
}

/**
 * `e` with `path` as its path when it is an fs error without one (a write or fsync on a descriptor names none), so
 * whoever maps it later can say which file; the error stays what it was for callers that look at its errno.
 */
export function namingPath<E>(e: E, path: string): E {
  if (isErrnoError(e) && e.path === undefined) e.path = path;
  return e;
}
