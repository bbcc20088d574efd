// Runs the real CLI as a user the file modes bind: as root (who passes every mode check), as uid 65534 via setpriv.
import { execFileSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import { CLI_BIN } from './cli.js';

export const NOBODY = 65534;
export const asRoot = process.getuid?.() === 0;

export function hasSetpriv(): boolean {
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether the unprivileged user can read the CLI where this checkout lies (a clone under a 0700 folder: no). */
export function nobodyReadsCli(): boolean {
  if (!asRoot) return true;
  try {
    execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', 'test', '-r', CLI_BIN], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Why file modes cannot be tested here, or null when they can (not root, or root with setpriv and a readable CLI). */
export function modesUntestable(): string | null {
  if (process.platform !== 'linux' && asRoot) return 'runs as root off Linux (no setpriv)';
  if (!asRoot) return null;
  if (!hasSetpriv()) return 'runs as root without setpriv to drop to an unprivileged user';
  if (!nobodyReadsCli()) return `uid ${NOBODY} cannot read ${CLI_BIN}`;
  return null;
}

/** `argv` as the test user: prefixed with setpriv as root, unchanged otherwise. */
export function asTestUser(argv: string[]): string[] {
  return asRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...argv] : argv;
}

/** Makes `path` the test user's (a no-op unless root, where the files would be root's). */
export function giveToTestUser(path: string): void {
  if (asRoot) chownSync(path, NOBODY, NOBODY);
}
