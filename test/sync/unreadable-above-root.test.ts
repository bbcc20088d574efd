// A folder above the sessions root that this user cannot open for reading (a home under a folder only root may
// list) never fails a new session: the walk that makes found folders' names durable stops at the root's parent and
// passes over a parent it cannot open (strace of the real CLI, run as an unprivileged user when the tests run as
// root; skipped without strace, as root without setpriv, or where that user cannot read the CLI's checkout).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { hasStrace, joinResumed } from './kill-rig.js';
import { NOBODY, asRoot, asTestUser, giveToTestUser, hasSetpriv, nobodyReadsCli } from '../helpers/test-user.js';

const runnable = hasStrace() && process.platform === 'linux' && (!asRoot || (hasSetpriv() && nobodyReadsCli()));
if (!runnable) console.warn(`unreadable-above-root: skipped (needs strace on Linux, and as root setpriv with ${CLI_BIN} readable by uid ${NOBODY})`);

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.skipIf(!runnable)('a folder above the sessions root that cannot be read (strace of the real CLI)', () => {
  const base = mkdtempSync(join(tmpdir(), 'sessync-unreadable-'));
  chmodSync(base, 0o755); // the unprivileged user reaches its home in it
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** A folder of the test user's (nobody's, as root), with `mode`. */
  function folder(path: string, mode = 0o700): string {
    mkdirSync(path, { recursive: true });
    giveToTestUser(path);
    chmodSync(path, mode);
    return path;
  }

  /** `sessync new --json` as the test user under strace (opens and fsyncs): exit code, output and the trace's lines. */
  function traced(name: string, env: Record<string, string>, project: string): Promise<{ code: number | null; out: string; err: string; trace: string[] }> {
    const trace = join(base, `${name}.strace`);
    const cli = [process.execPath, CLI_BIN, 'new', '--json', '--cwd', project];
    const cmd = asTestUser(cli);
    const child = spawn('strace', ['-f', '-qq', '-y', '-s', '500', '-e', 'trace=openat,fsync,fdatasync', '-o', trace, ...cmd], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err, trace: joinResumed(readFileSync(trace, 'utf8').split('\n')) })));
  }

  // Calls another thread cut are joined to their results (joinResumed), so each is matched with its result.
  const fsynced = (t: string[], dir: string) => t.some((l) => new RegExp(`\\bf(?:data)?sync\\(\\d+<${esc(dir)}>\\) += 0`).test(l));
  const opened = (t: string[], dir: string) => t.filter((l) => new RegExp(`\\bopenat\\(AT_FDCWD(<[^>]*>)?, "${esc(dir)}", O_RDONLY`).test(l));

  /** A user's home in `base`, its sessions root at `root` (made, with an unreadable folder somewhere above it). */
  async function twoSessions(name: string, root: string): Promise<{ first: Awaited<ReturnType<typeof traced>>; second: Awaited<ReturnType<typeof traced>> }> {
    const home = join(base, name);
    const project = folder(join(home, 'proj'));
    const env = { HOME: home, SESSYNC_HOME: join(home, '.sessync'), SESSYNC_SESSIONS_DIR: root };
    // The first run makes the project folder; the second finds it there, as it finds one a killed pull left.
    const first = await traced(`${name}-1`, env, project);
    const second = await traced(`${name}-2`, env, project);
    return { first, second };
  }

  it("the root's parent unreadable: the session is made, the root fsynced, the parent's open refused and passed over", async () => {
    folder(join(base, 'a'));
    const locked = folder(join(base, 'a', 'locked'));
    const root = folder(join(locked, 'sessions'));
    chmodSync(locked, 0o300); // can be passed through and written in, not listed or opened
    const { first, second } = await twoSessions('a', root);
    for (const r of [first, second]) expect(r.code, r.err).toBe(0);
    const made = JSON.parse(second.out) as { path: string };
    expect(existsSync(made.path)).toBe(true);
    // The project folder (found by the second run) has its name fsynced in the root; the root's in `locked` cannot be.
    expect(fsynced(second.trace, root), 'the root fsynced (the found project folder\'s name)').toBe(true);
    expect(opened(second.trace, locked).some((l) => /= -1 EACCES/.test(l)), 'the root\'s parent tried, refused').toBe(true);
  }, 60_000);

  it("pi's folder that this user cannot search (another user's ~/.pi): sessync's own sessions are still made", async () => {
    const home = folder(join(base, 'c'), 0o755);
    folder(join(home, '.pi', 'agent'));
    chmodSync(join(home, '.pi'), 0o000); // pi set up, not searchable: looking for its sessions folder gets EACCES
    const root = folder(join(home, 'own', 'sessions'));
    const { first, second } = await twoSessions('c', root);
    for (const r of [first, second]) expect(r.code, r.err).toBe(0);
    expect(existsSync((JSON.parse(second.out) as { path: string }).path)).toBe(true);
    expect(fsynced(second.trace, root), 'the root fsynced').toBe(true);
    expect(fsynced(second.trace, join(home, 'own')), "the root's parent fsynced: the root found, not the file's folder").toBe(true);
  }, 60_000);

  it('an unreadable folder two above the root is never opened: the walk stops at the root\'s parent', async () => {
    folder(join(base, 'b'));
    const locked = folder(join(base, 'b', 'locked'));
    const agent = folder(join(locked, 'agent'));
    const root = folder(join(agent, 'sessions'));
    chmodSync(locked, 0o300);
    const { first, second } = await twoSessions('b', root);
    for (const r of [first, second]) expect(r.code, r.err).toBe(0);
    expect(fsynced(second.trace, root), 'the root fsynced').toBe(true);
    expect(fsynced(second.trace, agent), 'the root\'s parent fsynced').toBe(true);
    expect(opened(second.trace, locked), 'nothing above the root\'s parent opened').toEqual([]);
  }, 60_000);
});
