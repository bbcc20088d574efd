// The real CLI on a session folder it may not write, a full disk and a read-only mount: a coded error naming the path,
// whether a retry helps, and the session file as it was (as root: the CLI runs as uid 65534; the disks are tmpfs).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, truncateSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import type { CliResult } from '../helpers/cli.js';
import { asTestUser, giveToTestUser, modesUntestable } from '../helpers/test-user.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';
import { entriesOf, jsonl, msg } from './cli-env.js';

/** A home and a project folder of the test user's, and the CLI run in them as that user (or as root: `root`). */
function sandbox(home: string, project: string, as: 'user' | 'root') {
  for (const d of [home, project]) {
    mkdirSync(d, { recursive: true });
    if (as === 'user') giveToTestUser(d);
  }
  const env = { HOME: home, SESSYNC_HOME: home, SESSYNC_SESSIONS_DIR: undefined, SESSYNC_LOCK_TIMEOUT_MS: undefined };
  return (args: string[], input = '', extraEnv: Record<string, string> = {}): Promise<CliResult> =>
    runCli([...args, '--cwd', project], { env: { ...env, ...extraEnv }, input, ...(as === 'user' ? { wrap: asTestUser } : {}) });
}

type Run = ReturnType<typeof sandbox>;

/** A temporary folder for a describe: made before its tests (`mode`), removed after (none when filtered out). */
function useTempDir(prefix: string, mode?: number): { readonly dir: string } {
  let t: { dir: string; cleanup(): void } | undefined;
  beforeAll(() => {
    t = tempDir(prefix);
    if (mode !== undefined) chmodSync(t.dir, mode);
  });
  afterAll(() => t?.cleanup());
  return {
    get dir() {
      return t!.dir;
    },
  };
}

/** The `--json` error document the CLI wrote on stderr. */
function jsonError(r: CliResult): { code: string; message: string; retryable: boolean; details?: Record<string, unknown> } {
  const line = r.stderr.trim().split('\n').at(-1)!;
  return (JSON.parse(line) as { error: ReturnType<typeof jsonError> }).error;
}

const untestable = modesUntestable();
if (untestable) console.warn(`fs-failures: the unwritable-folder case is skipped: ${untestable}`);

describe.skipIf(untestable !== null)('a session folder the CLI may not write (chmod 0500)', () => {
  const t = useTempDir('sessync-fsfail-', 0o755); // the test user reaches its home in it
  let run: Run;
  beforeAll(() => {
    run = sandbox(join(t.dir, 'home'), join(t.dir, 'project'), 'user');
  });

  it('append: exit 1, fs_permission, not retryable, the folder named, no stack, the file unchanged', async () => {
    const made = await run(['new', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const { id, path } = made.json<{ id: string; path: string }>();
    expect((await run(['append', id, '--json'], jsonl([msg('user', 'kept')]))).code).toBe(0);
    const before = readFileSync(path);
    const folder = dirname(path);
    chmodSync(folder, 0o500);
    try {
      const r = await run(['append', id, '--json'], jsonl([msg('user', 'refused')]));
      expect(r.code, r.stderr).toBe(1);
      const err = jsonError(r);
      expect(err).toMatchObject({ code: 'fs_permission', retryable: false, details: { errno: 'EACCES' } });
      expect(err.message).toContain(folder);
      expect(err.message).toMatch(/permission denied.*ls -ld/);
      const human = await run(['append', id], jsonl([msg('user', 'refused')]));
      expect(human.code).toBe(1);
      expect(human.stderr).toMatch(/^sessync: cannot open .*: permission denied/);
      expect(human.stderr).toContain(folder);
      expect(human.stderr, 'no stack trace for a known errno').not.toMatch(/\n\s+at /);
      expect(human.stderr).not.toContain('retrying may help');
      expect(readFileSync(path).equals(before), 'the session file unchanged').toBe(true);
    } finally {
      chmodSync(folder, 0o700);
    }
  }, 60_000);
});

const noTmpfs = tmpfsUnavailable();
if (noTmpfs) console.warn(`fs-failures: the full-disk and read-only cases are skipped: ${noTmpfs}`);

describe.skipIf(noTmpfs !== null)('a full disk (a 128 KiB tmpfs holding SESSYNC_HOME)', () => {
  const disk = useTmpfs('128k');
  const project = useTempDir('sessync-full-project-');
  let run: Run;
  let mnt = '';
  let ref = { id: '', path: '' };
  beforeAll(async () => {
    mnt = disk.dir;
    run = sandbox(join(mnt, 'home'), project.dir, 'root');
    const made = await run(['new', '--json']);
    expect(made.code, made.stderr).toBe(0);
    ref = made.json();
    expect((await run(['append', ref.id, '--json'], jsonl([msg('user', 'kept '.repeat(400))]))).code).toBe(0);
  }, 60_000);

  it('an append that runs out of space mid-write: exit 1, fs_full, retryable, the file as it was; the retry after freeing space appends it', async () => {
    const filler = join(mnt, 'filler');
    const full = fill(filler);
    // Room for the lock file beside the session (one page each for it and a spare), none for the 20 KB entry: the
    // write gets the slack of the file's last page and the free pages, then ENOSPC.
    truncateSync(filler, full - 8192);
    const before = readFileSync(ref.path);
    const entry = jsonl([msg('user', 'big '.repeat(5000))]);
    const r = await run(['append', ref.id, '--json'], entry);
    expect(r.code, r.stderr).toBe(1);
    expect(readFileSync(ref.path).equals(before), 'the session file unchanged after the failed append').toBe(true);
    const err = jsonError(r);
    expect(err).toMatchObject({ code: 'fs_full', retryable: true, details: { errno: 'ENOSPC', path: ref.path } });
    expect(err.message).toContain(ref.path);
    expect(err.message).toMatch(/no space left.*then retry/);

    rmSync(filler);
    const again = await run(['append', ref.id, '--json'], entry);
    expect(again.code, again.stderr).toBe(0);
    const after = readFileSync(ref.path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const added = after.subarray(before.length).toString('utf8').split('\n').filter((l) => l !== '');
    expect(added).toHaveLength(1);
    expect(JSON.parse(added[0]!)).toMatchObject({ message: { content: [{ text: 'big '.repeat(5000) }] } });
    const doctor = await run(['doctor', ref.id, '--json']);
    expect(doctor.code, doctor.stdout).toBe(0);
  }, 60_000);

  it('list with no room for its cache: the sessions are listed, and a note (not an error) says the cache was not saved', async () => {
    const made = await run(['new', '--json']); // its list row not cached yet: list has a row to save
    expect(made.code, made.stderr).toBe(0);
    const { id } = made.json<{ id: string }>();
    const filler = join(mnt, 'filler');
    fill(filler);
    try {
      const r = await run(['list', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json<{ id: string }[]>().map((s) => s.id)).toContain(id);
      const notes = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { note?: { message: string } });
      expect(notes.map((n) => n.note?.message ?? '').join('\n')).toMatch(/could not save the (list|append) cache \(ENOSPC/);
      const human = await run(['list']);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stderr).toMatch(/^sessync: note: could not save the/m);
    } finally {
      rmSync(filler);
    }
  }, 60_000);

  /** A new session of its own for a case, and a full disk then (with `freePages` pages of it freed again). */
  async function sessionOnFullDisk(freePages: number): Promise<{ id: string; path: string; filler: string }> {
    const made = await run(['new', '--json']);
    expect(made.code, made.stderr).toBe(0);
    // The folder's list cache brought up to date (another case appended in it): the append has nothing to save first.
    expect((await run(['list', '--json'])).code).toBe(0);
    const filler = join(mnt, 'filler');
    truncateSync(filler, Math.max(0, fill(filler) - freePages * 4096));
    return { ...made.json<{ id: string; path: string }>(), filler };
  }

  it('no room even for the lock file: fs_full naming it, no lock file left behind, the retry after freeing space not kept waiting', async () => {
    const s = await sessionOnFullDisk(0);
    const before = readFileSync(s.path);
    const r = await run(['append', s.id, '--json'], jsonl([msg('user', 'no room')]));
    expect(r.code, r.stderr).toBe(1);
    const err = jsonError(r);
    expect(err).toMatchObject({ code: 'fs_full', retryable: true, details: { path: `${s.path}.lock` } });
    expect(err.message).toContain(`${s.path}.lock`);
    expect(readdirSync(dirname(s.path)).filter((n) => n.endsWith('.lock')), 'no lock file left').toEqual([]);
    expect(readFileSync(s.path).equals(before)).toBe(true);
    rmSync(s.filler);
    const started = Date.now();
    const again = await run(['append', s.id, '--json'], jsonl([msg('user', 'room now')]), { SESSYNC_LOCK_TIMEOUT_MS: '2000' });
    expect(again.code, again.stderr).toBe(0);
    expect(Date.now() - started, 'not waiting out a lock left by the failed run').toBeLessThan(2000);
  }, 60_000);

  it('the entry fits but its cache cannot be saved: the append succeeds (a retry would add it twice), the entry there once', async () => {
    // One page free: the lock file takes it; the entry goes into the slack of the file's last page; the cache finds none.
    const s = await sessionOnFullDisk(1);
    try {
      const r = await run(['append', s.id, '--json'], jsonl([msg('user', 'fits')]));
      expect(r.code, r.stderr).toBe(0);
      const ids = r.json<{ ids: string[] }>().ids;
      expect(entriesOf(s.path).map((e) => e.id)).toEqual(ids);
    } finally {
      rmSync(s.filler);
    }
    const doctor = await run(['doctor', s.id, '--json']);
    expect(doctor.code, doctor.stdout).toBe(0);
  }, 60_000);

  it('a fork the disk has room for part of: fs_full naming the new file, no temp or new file left, the source unchanged', async () => {
    const made = await run(['new', '--json']);
    const src = made.json<{ id: string; path: string }>();
    expect((await run(['append', src.id, '--json'], jsonl([msg('user', 'forked '.repeat(1500))]))).code).toBe(0);
    expect((await run(['list', '--json'])).code).toBe(0);
    const folder = dirname(src.path);
    const names = readdirSync(folder).sort();
    const before = readFileSync(src.path);
    const filler = join(mnt, 'filler');
    truncateSync(filler, fill(filler) - 4096); // one page for the new file's ~11 KB: its one writev comes back short
    try {
      const r = await run(['fork', src.id, '--json']);
      expect(r.code, r.stderr).toBe(1);
      const err = jsonError(r);
      expect(err).toMatchObject({ code: 'fs_full', retryable: true, details: { errno: 'ENOSPC' } });
      expect(err.message).toMatch(new RegExp(`^cannot write to ${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^ ]+\\.jsonl: no space left`));
      expect(readdirSync(folder).sort(), 'no temp file, no new session file').toEqual(names);
      expect(readFileSync(src.path).equals(before)).toBe(true);
    } finally {
      rmSync(filler);
    }
  }, 60_000);
});

describe.skipIf(noTmpfs !== null)('a read-only file system (a tmpfs remounted ro)', () => {
  const disk = useTmpfs('128k');
  const project = useTempDir('sessync-ro-project-');
  let run: Run;
  let mnt = '';
  beforeAll(() => {
    mnt = disk.dir;
    run = sandbox(join(mnt, 'home'), project.dir, 'root');
  });

  it('append: exit 1, fs_readonly (not the ENOENT recursive mkdir answers), not retryable, the path named, the file unchanged', async () => {
    const made = await run(['new', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const { id, path } = made.json<{ id: string; path: string }>();
    const before = readFileSync(path);
    execFileSync('mount', ['-o', 'remount,ro', mnt]);
    try {
      const r = await run(['append', id, '--json'], jsonl([msg('user', 'nowhere')]));
      expect(r.code, r.stderr).toBe(1);
      const err = jsonError(r);
      expect(err, JSON.stringify(err)).toMatchObject({ code: 'fs_readonly', retryable: false, details: { errno: 'EROFS' } });
      // The first write refused may be a cache's folder in SESSYNC_HOME: the path named is on the read-only mount.
      expect(err.message).toContain(mnt);
      expect(err.message).toMatch(/read-only.*Remount it read-write/);
      expect(readFileSync(path).equals(before)).toBe(true);
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mnt]);
    }
  }, 60_000);
});
