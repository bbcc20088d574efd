// Which temp files a crashed writer left: named after their writer's pid and instance, so a live writer's are never taken.
import { randomBytes } from 'node:crypto';

/** Tells this process's writers from an earlier process that had the same pid (a container restarts as pid 1). */
export const INSTANCE = randomBytes(4).toString('hex');

/** `<pid>-<instance>` for a temp name this process writes. */
export function tempOwner(): string {
  return `${process.pid}-${INSTANCE}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the pid exists but belongs to another user, so it is alive.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a temp file named `<pid>-<instance>...` can go: its writer is dead, or it is this pid
 * under another instance (an earlier life of this pid). A name this code does not write, and a
 * live writer's file that is older than `maxAgeMs` (its pid was reused), go by age alone.
 */
export function isStaleTemp(name: string, ageMs: number, maxAgeMs: number): boolean {
  const m = /^(\d+)-([0-9a-f]+)(?:[-.]|$)/.exec(name);
  if (!m) return ageMs > maxAgeMs;
  const pid = Number(m[1]);
  if (pid === process.pid) return m[2] !== INSTANCE;
  return !alive(pid) || ageMs > maxAgeMs;
}
