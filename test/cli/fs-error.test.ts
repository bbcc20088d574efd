// fsError's table: each errno Node's fs throws becomes a stable code, retryable or not, and a message naming the path.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessyncError } from '../../shared/errors.js';
import { fsError, isErrnoError, namingPath } from '../../cli/fs-error.js';
import { tempDir } from '../helpers/cli.js';

/** An error shaped as Node's fs makes them (uvException): message, errno name, syscall, path. */
function errno(code: string, syscall: string, path?: string, dest?: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: from the table, ${syscall} '${path ?? ''}'`) as NodeJS.ErrnoException;
  e.code = code;
  e.syscall = syscall;
  if (path !== undefined) e.path = path;
  if (dest !== undefined) (e as { dest?: string }).dest = dest;
  return e;
}

const P = '/home/u/.sessync/sessions/--proj--/s.jsonl';

describe('fsError: the table', () => {
  const table: [errno: string, syscall: string, code: string, retryable: boolean, advice: RegExp][] = [
    ['EACCES', 'open', 'fs_permission', false, /permission denied.*ls -ld \/home\/u\/\.sessync\/sessions\/--proj--/],
    ['EPERM', 'unlink', 'fs_permission', false, /not permitted/],
    ['EROFS', 'open', 'fs_readonly', false, /read-only.*SESSYNC_HOME/],
    ['ENOSPC', 'write', 'fs_full', true, /no space left.*df -h.*then retry/],
    ['EDQUOT', 'write', 'fs_full', true, /quota/],
    ['EMFILE', 'open', 'fs_limit', true, /too many files open.*ulimit -n/],
    ['ENFILE', 'open', 'fs_limit', true, /system has too many files open/],
    ['EAGAIN', 'read', 'fs_busy', true, /temporarily unavailable/],
    ['EBUSY', 'rmdir', 'fs_busy', true, /busy/],
    ['EIO', 'read', 'fs_io', false, /input\/output error.*dmesg/],
    ['ENOTDIR', 'mkdir', 'fs_bad_path', false, /a file where a folder is expected/],
    ['EISDIR', 'open', 'fs_bad_path', false, /a folder where a file is expected/],
    ['ELOOP', 'open', 'fs_bad_path', false, /symbolic link/],
    ['ENAMETOOLONG', 'open', 'fs_bad_path', false, /too long/],
    ['ENOENT', 'open', 'not_found', false, /does not exist/],
  ];

  it.each(table)('%s on %s -> %s (retryable %s)', (name, syscall, code, retryable, advice) => {
    const e = fsError(errno(name, syscall, P));
    expect(e).toBeInstanceOf(SessyncError);
    const err = e as SessyncError;
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(retryable);
    expect(err.message).toContain(P);
    expect(err.message).toContain(`(${name})`);
    expect(err.message).toMatch(advice);
    expect(err.message, 'no stack for a known errno').not.toMatch(/\n\s+at /);
    expect(err.toJSON()).toMatchObject({ code, retryable, details: { errno: name, syscall, path: P } });
  });

  it('names the operation: a rename says both paths, a call on a descriptor the fallback path', () => {
    const r = fsError(errno('EXDEV', 'rename', '/a/x', '/b/y')) as SessyncError;
    expect(r.message).toContain('rename /a/x to /b/y');
    const w = fsError(errno('ENOSPC', 'write'), P) as SessyncError;
    expect(w.message).toMatch(new RegExp(`^cannot write to ${P.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no space left`));
    expect(w.details).toEqual({ errno: 'ENOSPC', syscall: 'write', path: P });
  });

  it('an errno it cannot explain is fs_error (not internal, which stops a whole sync run), naming the errno, the call and the path (and keeping the stack)', () => {
    const e = errno('EXDEV', 'link', '/a/x', '/b/y');
    const err = fsError(e) as SessyncError;
    expect(err.code).toBe('fs_error');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/^unexpected file-system error EXDEV trying to link \/a\/x to \/b\/y: /);
    expect(err.message).toContain(e.stack!.split('\n')[1]!.trim());
    expect(err.details).toEqual({ errno: 'EXDEV', syscall: 'link', path: '/a/x', dest: '/b/y' });
  });

  it('passes SessyncErrors and non-errno errors through unchanged', () => {
    const s = new SessyncError('locked', 'held');
    expect(fsError(s)).toBe(s);
    const plain = new TypeError('x is not a function');
    expect(fsError(plain)).toBe(plain);
    const parse = Object.assign(new Error('bad option'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
    expect(isErrnoError(parse)).toBe(false);
    expect(fsError(parse)).toBe(parse);
    expect(fsError('a string')).toBe('a string');
  });

  it('a code named like an Object property is not in the table (Object.hasOwn)', () => {
    expect((fsError(errno('ECONSTRUCTOR', 'open', P)) as SessyncError).code).toBe('fs_error');
  });
});

describe('namingPath', () => {
  it('gives a path to an fs error without one, keeps one it has, and leaves other errors alone', () => {
    const w = errno('ENOSPC', 'write');
    expect(namingPath(w, P)).toBe(w);
    expect(w.path).toBe(P);
    expect((fsError(w) as SessyncError).message).toContain(P);
    const o = errno('EACCES', 'open', '/other');
    expect(namingPath(o, P).path).toBe('/other');
    const plain = new Error('no errno');
    expect(namingPath(plain, P)).not.toHaveProperty('path');
  });
});

describe('fsError: errors real fs calls throw', () => {
  const t = tempDir('sessync-fserror-');
  afterAll(() => t.cleanup());
  const file = join(t.dir, 'file');
  writeFileSync(file, 'x');
  mkdirSync(join(t.dir, 'folder'));
  symlinkSync(join(t.dir, 'loop-b'), join(t.dir, 'loop-a'));
  symlinkSync(join(t.dir, 'loop-a'), join(t.dir, 'loop-b'));

  const cases: [what: string, call: () => Promise<unknown>, code: string, path: string][] = [
    ['ENOTDIR: a file where a folder is', () => open(join(file, 'below')), 'fs_bad_path', join(file, 'below')],
    ['EISDIR: a folder where a file is', () => open(join(t.dir, 'folder'), 'a'), 'fs_bad_path', join(t.dir, 'folder')],
    ['ELOOP: links that loop', () => open(join(t.dir, 'loop-a')), 'fs_bad_path', join(t.dir, 'loop-a')],
    ['ENOENT: missing', () => open(join(t.dir, 'missing')), 'not_found', join(t.dir, 'missing')],
  ];

  it.each(cases)('%s', async (_what, call, code, path) => {
    const e = await call().then(() => null, (x: unknown) => x);
    expect(isErrnoError(e)).toBe(true);
    const err = fsError(e) as SessyncError;
    expect(err.code).toBe(code);
    expect(err.message).toContain(path);
  });

  it('a call on a descriptor carries no path: the message says so rather than naming a wrong one', async () => {
    const e = await readFile(join(t.dir, 'folder')).then(() => null, (x: unknown) => x);
    const err = fsError(e) as SessyncError;
    expect(err.code).toBe('fs_bad_path');
    expect(err.message).toMatch(/^cannot read a file: it is a folder/);
    expect((fsError(e, join(t.dir, 'folder')) as SessyncError).message).toContain(join(t.dir, 'folder'));
  });
});
