// A small tmpfs to fill up (root only: mounting one needs it), for tests of what a full disk does to writes.
import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
