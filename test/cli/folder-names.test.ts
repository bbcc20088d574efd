// A new session file's folder names: each folder from its own up to the sessions root gets its parent fsynced once
// per process, no higher, never across a mount; a parent that cannot be opened is passed over, a failing disk is not.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs, { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { dirname, join } from 'node:path';
import { createSessionFile } from '../../cli/store/session-writer.js';
import { sessionsRootOf, unnamedUpTo } from '../../cli/store/folder-names.js';
import { useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-folder-names-', { beforeEach, afterEach });

const header = (id: string) => ({ type: 'session' as const, version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' });
const entry = { type: 'message', id: 'e1', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'x' } };

/**
 * Runs `fn` with every folder fsync the writer makes recorded (the path opened, then synced), and `fault(path)`'s
 * error, if any, thrown by that fsync's open. fsyncPath opens with node:fs/promises, whose ESM bindings follow.
 */
async function withFsyncs<T>(fault: (path: string) => NodeJS.ErrnoException | null, fn: () => Promise<T>): Promise<{ synced: string[]; result: PromiseSettledResult<T> }> {
  const open = fsp.open;
  const synced: string[] = [];
  (fsp as { open: unknown }).open = async (path: string, ...rest: never[]) => {
    const e = typeof path === 'string' && rest[0] === 'r' ? fault(path) : null;
    if (e) throw e;
    const fh = await open(path, ...rest);
    const sync = fh.sync.bind(fh);
    fh.sync = async () => {
      await sync();
      synced.push(String(path));
    };
    return fh;
  };
  syncBuiltinESMExports();
  try {
    const [result] = await Promise.allSettled([fn()]);
    return { synced, result: result! };
  } finally {
    (fsp as { open: unknown }).open = open;
    syncBuiltinESMExports();
  }
}

/**
 * Runs `fn` with node:fs's statSync answering as `answer` says (a mock of the file system's answers, for what this
 * one cannot show: no birth time as on NFS or ext3, an inode number handed back, a folder gone mid-walk).
 */
function withStat<T>(answer: (path: string, real: fs.Stats) => fs.Stats, fn: () => T): T {
  const real = fs.statSync;
  (fs as { statSync: unknown }).statSync = (path: string, ...rest: never[]) => answer(String(path), real(path, ...rest) as fs.Stats);
  syncBuiltinESMExports();
  try {
    return fn();
  } finally {
    (fs as { statSync: unknown }).statSync = real;
    syncBuiltinESMExports();
  }
}

/** `st` as a file system without birth times reports it. */
const noBirth = (st: fs.Stats): fs.Stats => Object.assign(Object.create(Object.getPrototypeOf(st) as object) as fs.Stats, st, { birthtimeMs: 0 });

/** /dev/shm is a file system of its own (a tmpfs), mounted on /dev's. */
function shmIsMount(): boolean {
  return existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync('/dev').dev;
}

const errno = (code: string) => Object.assign(new Error(`${code}: injected`), { code });

describe('folder names of new session files', () => {
  /** <dir>/<top>/above/root/project, all there before (made by an earlier run, pi or a killed pull). */
  function layout(top = 'top') {
    const root = join(home.dir, top, 'above', 'root');
    const project = join(root, '--p--');
    mkdirSync(project, { recursive: true });
    return { root, project, env: { ...process.env, SESSYNC_SESSIONS_DIR: root } };
  }

  it('a file in a folder found there: its folder, the root and the root\'s parent fsynced, nothing higher; once per process', async () => {
    const { root, project, env } = layout();
    const first = await withFsyncs(() => null, () => createSessionFile(join(project, 'a.jsonl'), header('a'), [entry], undefined, env));
    expect(first.result.status).toBe('fulfilled');
    const folders = first.synced.filter((p) => !p.endsWith('.jsonl')).sort();
    expect(folders).toEqual([project, root, dirname(root)].sort());
    const second = await withFsyncs(() => null, () => createSessionFile(join(project, 'b.jsonl'), header('b'), [entry], undefined, env));
    expect(second.synced.filter((p) => !p.endsWith('.jsonl'))).toEqual([project]);
  });

  it('a parent that cannot be opened for fsync (EACCES, EISDIR, EPERM) above the file\'s folder is passed over', async () => {
    for (const code of ['EACCES', 'EISDIR', 'EPERM']) {
      const { root, project, env } = layout(code); // a folder walked once is not walked again in this process
      const f = join(project, `${code}.jsonl`);
      const r = await withFsyncs((p) => (p === dirname(root) ? errno(code) : null), () => createSessionFile(f, header(code), [entry], undefined, env));
      expect(r.result.status, code).toBe('fulfilled');
      expect(r.synced).toContain(root);
      expect(existsSync(f)).toBe(true);
    }
  });

  it('a parent whose fsync fails otherwise (EIO) fails the file, and so does its own folder that cannot be opened', async () => {
    const { root, project, env } = layout();
    const r = await withFsyncs((p) => (p === dirname(root) ? errno('EIO') : null), () => createSessionFile(join(project, 'a.jsonl'), header('a'), [entry], undefined, env));
    expect(r.result.status).toBe('rejected');
    expect((r.result as PromiseRejectedResult).reason.code).toBe('EIO');
    const other = join(root, '--q--');
    mkdirSync(other);
    const own = await withFsyncs((p) => (p === other ? errno('EACCES') : null), () => createSessionFile(join(other, 'b.jsonl'), header('b'), [entry], undefined, env));
    expect(own.result.status).toBe('rejected');
    expect((own.result as PromiseRejectedResult).reason.code).toBe('EACCES');
  });

  it('a folder made by this process is not walked again, the ones found above it are', async () => {
    const { root, env } = layout();
    const made = join(root, '--new--');
    const r = await withFsyncs(() => null, () => createSessionFile(join(made, 'a.jsonl'), header('a'), [entry], undefined, env));
    expect(r.result.status).toBe('fulfilled');
    // The root: the new folder's parent (mkdir); the root's parent: the root's found name. Each once.
    expect(r.synced.filter((p) => !p.endsWith('.jsonl')).sort()).toEqual([made, root, dirname(root)].sort());
  });

  it('a folder removed and made again (by pi, while a watcher runs) is walked again: its new name is fsynced in its parent', async () => {
    const { root, project, env } = layout();
    await createSessionFile(join(project, 'a.jsonl'), header('a'), [entry], undefined, env);
    rmSync(project, { recursive: true });
    mkdirSync(project); // another program's: this process did not make it
    const r = await withFsyncs(() => null, () => createSessionFile(join(project, 'b.jsonl'), header('b'), [entry], undefined, env));
    expect(r.result.status).toBe('fulfilled');
    expect(r.synced.filter((p) => !p.endsWith('.jsonl')).sort(), 'the root (its name) and the folder, not the root\'s parent again').toEqual([project, root].sort());
  });

  it('without birth times (mock stats, as NFS or ext3 answer): a folder is remembered while held open, once per process', () => {
    const { root, project } = layout('nobirth');
    const walk = () => withStat((_p, st) => noBirth(st), () => unnamedUpTo(project, () => root));
    expect(walk()).toEqual([project, root]);
    expect(walk(), 'a second file in it: no walk').toEqual([]);
    const sibling = join(root, '--q--');
    mkdirSync(sibling);
    expect(withStat((_p, st) => noBirth(st), () => unnamedUpTo(sibling, () => root)), 'the root stays named').toEqual([sibling]);
  });

  it('without birth times, a folder removed and made again (ext4 hands its inode number back) is walked again', () => {
    const { root, project } = layout('nobirth-again');
    const walk = () => withStat((_p, st) => noBirth(st), () => unnamedUpTo(project, () => root));
    expect(walk()).toEqual([project, root]);
    rmSync(project, { recursive: true });
    mkdirSync(project); // pi's, while a watcher runs
    expect(walk(), 'the new folder\'s name fsynced in the root again').toEqual([project]);
  });

  it('without birth times, past the bound of folders held open the least recently used one is walked again', () => {
    const { root } = layout('nobirth-many');
    const dirs = Array.from({ length: 260 }, (_, i) => join(root, `--p${i}--`));
    const walk = (d: string) => withStat((_p, st) => noBirth(st), () => unnamedUpTo(d, () => root));
    for (const d of dirs) {
      mkdirSync(d);
      walk(d);
    }
    expect(walk(dirs[0]!), 'let go: walked again').toEqual([dirs[0]]);
    expect(walk(dirs[259]!), 'still held').toEqual([]);
  });

  it('a folder gone mid-walk (a pruner) fails the walk and leaves none of it counted named', () => {
    const { root, project } = layout('gone');
    const above = dirname(project);
    // Gone between the walk's two looks at it: after the check of the project folder's parent, before its own.
    let looks = 0;
    let gone = true;
    const vanish = (p: string, st: fs.Stats) => {
      if (gone && p === above && ++looks === 2) throw Object.assign(new Error(`ENOENT: no such file or directory, stat '${p}'`), { code: 'ENOENT' });
      return st;
    };
    expect(() => withStat(vanish, () => unnamedUpTo(project, () => root))).toThrow(/ENOENT/);
    gone = false;
    // Nothing was fsynced for that walk: the project folder's name is still to be made durable.
    expect(withStat(vanish, () => unnamedUpTo(project, () => root))).toEqual([project, root]);
  });

  it("a sessions root that cannot be looked up (pi's folder this user cannot search) names no root, and fails nothing", () => {
    const h = join(home.dir, 'locked-pi');
    const env = { HOME: h, SESSYNC_HOME: join(h, '.sessync') };
    const own = join(h, '.sessync', 'sessions');
    const pi = join(h, '.pi');
    mkdirSync(join(pi, 'agent'), { recursive: true }); // there, but not for this user (the mock's EACCES)
    const denied = (p: string, st: fs.Stats) => {
      if (p.startsWith(pi + '/')) throw Object.assign(new Error(`EACCES: permission denied, stat '${p}'`), { code: 'EACCES' });
      return st;
    };
    expect(withStat(denied, () => sessionsRootOf(join(own, '--p--'), env))).toBe(own);
  });

  it("the root is the deepest sessions folder sessync knows that holds the file's folder: pi's, its own store, a mirror", () => {
    const h = join(home.dir, 'user');
    const env = { HOME: h, SESSYNC_HOME: join(h, '.sessync') };
    const own = join(h, '.sessync', 'sessions');
    expect(sessionsRootOf(join(own, '--p--'), env), 'no pi here: sessync\'s own store').toBe(own);
    mkdirSync(join(h, '.pi', 'agent'), { recursive: true }); // pi set up
    const pi = join(h, '.pi', 'agent', 'sessions');
    expect(sessionsRootOf(join(pi, '--p--'), env)).toBe(pi);
    expect(sessionsRootOf(join(own, '--p--'), env), 'read beside pi\'s').toBe(own);
    const mirror = join(h, '.sessync', 'agents', 'claude-code', 'sessions');
    expect(sessionsRootOf(join(mirror, '--p--'), env), 'deeper than the home').toBe(mirror);
    expect(sessionsRootOf(join(h, 'elsewhere'), env), 'under no root: the folder alone').toBe(join(h, 'elsewhere'));
  });

  it.skipIf(!shmIsMount())('the walk stops at a mount point: the folder holding it is another file system\'s', () => {
    const shm = mkdtempSync('/dev/shm/sessync-folder-names-');
    try {
      const dir = join(shm, 'a');
      mkdirSync(dir);
      // /dev/shm is a tmpfs mounted on /dev: its name there is not this file system's to make durable.
      expect(unnamedUpTo(dir, () => '/dev/shm')).toEqual([dir, shm]);
      expect(unnamedUpTo(dir, () => '/dev/shm'), 'once per process').toEqual([]);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});
