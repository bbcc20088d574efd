// A small tmpfs to fill up (root only: mounting one needs it), for tests of what a full disk does to writes.
import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** Mounts a tmpfs of `size` (e.g. '64k') on a new folder; a string saying why when that cannot be done here. */
export function smallTmpfs(size: string): { dir: string; cleanup(): void } | string {
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs';
  const dir = mkdtempSync(join(tmpdir(), 'sessync-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  }
  return {
    dir,
    cleanup() {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes `path` until its file system is full; returns the file's size then. */
export function fill(path: string): number {
  const fd = openSync(path, 'w');
  const page = Buffer.alloc(4096, 0x61);
  try {
    for (;;) {
      try {
        writeSync(fd, page);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOSPC') return fstatSync(fd).size;
        throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
}

let probed: string | null | undefined;

/** Why a small tmpfs cannot be mounted here (not root, mount refused), or null; probed once (mounted, unmounted). */
export function tmpfsUnavailable(): string | null {
  if (probed !== undefined) return probed;
  const t = smallTmpfs('64k');
  if (typeof t === 'string') return (probed = t);
  t.cleanup();
  return (probed = null);
}

/**
 * A tmpfs of `size` for a describe: mounted before its tests, unmounted after (a run filtered to other tests mounts
 * none and leaves none). Call in the describe's body, skipped by tmpfsUnavailable().
 */
export function useTmpfs(size: string): { readonly dir: string } {
  let t: { dir: string; cleanup(): void } | undefined;
  beforeAll(() => {
    const m = smallTmpfs(size);
    if (typeof m === 'string') throw new Error(m);
    t = m;
  });
  afterAll(() => t?.cleanup());
  return {
    get dir() {
      if (!t) throw new Error('the tmpfs is mounted in beforeAll: read dir in a hook or test');
      return t.dir;
    },
  };
}
