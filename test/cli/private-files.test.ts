// Under umask 022, everything sessync creates is its owner's alone: SESSYNC_HOME and its folders 0700, files 0600.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectDir } from '../../cli/store/paths.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { Machine, useServer } from '../sync/helpers.js';

const FIXTURE = join(import.meta.dirname, '../../../shared/fixtures/pi-v1/before-compaction.jsonl');
let savedUmask = 0;

beforeAll(() => {
  // The usual default: without it, files come out 0644 and folders 0755 unless sessync asks for less.
  savedUmask = process.umask(0o022);
});
afterAll(() => {
  process.umask(savedUmask);
});

/** Every folder and file under `dir` (itself included) with its permission bits, as "0700 relative/path". */
function modes(dir: string): string[] {
  const out: string[] = [];
  const walk = (p: string, rel: string) => {
    const st = statSync(p);
    out.push(`${(st.mode & 0o777).toString(8).padStart(4, '0')} ${rel || '.'}${st.isDirectory() ? '/' : ''}`);
    if (st.isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n), rel ? `${rel}/${n}` : n);
  };
  walk(dir, '');
  return out;
}

/** Folders 0700 and files 0600, and at least `min` files: what every listing below must be. */
function expectPrivate(dir: string, min = 1): void {
  const all = modes(dir);
  const files = all.filter((l) => !l.endsWith('/'));
  expect(files.length).toBeGreaterThanOrEqual(min);
  expect(all.filter((l) => !(l.endsWith('/') ? l.startsWith('0700 ') : l.startsWith('0600 ')))).toEqual([]);
}

describe('files and folders sessync creates', () => {
  it('sessync new in a SESSYNC_HOME that does not exist yet: the home, its folders, the session file and the caches', async () => {
    const t = tempDir('sessync-perm-');
    try {
      const home = join(realpathSync(t.dir), 'fresh', 'home');
      const project = join(t.dir, 'project');
      mkdirSync(project);
      const env = { SESSYNC_HOME: home };
      const r = await runCli(['new', '--json', '--cwd', project], { env });
      expect(r.code, r.stderr).toBe(0);
      const { id } = r.json() as { id: string };
      expect((await runCli(['append', id, '--json', '--cwd', project], { env, input: '{"type":"message","message":{"role":"user","content":"hi"}}\n' })).code).toBe(0);
      expect((await runCli(['list', '--json', '--cwd', project], { env })).code).toBe(0);
      expect(statSync(join(t.dir, 'fresh')).mode & 0o777).toBe(0o700); // made by sessync on the way to the home
      expectPrivate(home, 2);
      expect(modes(home).some((l) => l.endsWith(`_${id}.jsonl`))).toBe(true);
    } finally {
      t.cleanup();
    }
  });

  it('--sessions-dir of an existing folder (pi\'s, 0755): its mode is kept, what sessync adds in it is private', async () => {
    const t = tempDir('sessync-perm-');
    try {
      const root = realpathSync(t.dir);
      const piDir = join(root, 'pi-sessions');
      mkdirSync(piDir, { mode: 0o755 });
      chmodSync(piDir, 0o755);
      const project = join(root, 'project');
      mkdirSync(project);
      const env = { SESSYNC_HOME: join(root, 'home') };
      const r = await runCli(['new', '--json', '--sessions-dir', piDir, '--cwd', project], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(statSync(piDir).mode & 0o777).toBe(0o755);
      expectPrivate(projectDir(piDir, project), 1);
    } finally {
      t.cleanup();
    }
  });

  it.skipIf(!statSync(FIXTURE, { throwIfNoEntry: false }))('migrate of a 0644 file from pi: the backup and the migrated file are 0600', async () => {
    const t = tempDir('sessync-perm-');
    try {
      const root = realpathSync(t.dir);
      const file = join(root, 'old.jsonl');
      copyFileSync(FIXTURE, file);
      chmodSync(file, 0o644);
      const r = await runCli(['migrate', file, '--json'], { env: { SESSYNC_HOME: join(root, 'home') } });
      expect(r.code, r.stderr).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(`${file}.bak`).mode & 0o777).toBe(0o600);
    } finally {
      t.cleanup();
    }
  });
});

describe('sync state and pulled sessions', () => {
  const rig = useServer(undefined, 'sessync-perm-sync-');

  it('login, push, pull --all into fresh homes: every folder 0700, every file 0600 (login, state, caches, pulled files)', async () => {
    // The rig makes each home; removed so that sessync creates it, as on a new machine.
    const fresh = (name: string) => {
      const m = new Machine(rig.root, name);
      rmSync(m.home, { recursive: true });
      return m;
    };
    const a = fresh('a');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['push', '--json']);
    const b = fresh('b');
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    await b.say(id, 'three');
    await b.ok(['sync', '--all', '--json']);
    await a.ok(['sync', '--json']);
    for (const m of [a, b]) expectPrivate(m.home, 5);
    expect(modes(b.home).some((l) => l.startsWith('0600 ') && l.endsWith(`_${id}.jsonl`))).toBe(true);
  }, 120_000);
});
