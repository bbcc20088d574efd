// writeNewFiles: several new files whole, or none. A name already taken is a conflict that removes the files and
// folders the call made before it, and leaves the file that was there byte for byte; no temporary file is left.
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeNewFiles } from '../../cli/store/write-new-files.js';
import { tempDir } from '../helpers/cli.js';

describe('writeNewFiles', () => {
  const t = tempDir('sessync-newfiles-');
  afterAll(() => t.cleanup());

  it('writes every file with its text, 0600, in folders of the given mode; no temporary file left', async () => {
    const root = join(t.dir, 'ok');
    await writeNewFiles([{ path: join(root, 'a', 'b', 'one.jsonl'), text: '1\n' }, { path: join(root, 'two.jsonl'), text: '2\n' }], 0o750);
    expect(readFileSync(join(root, 'a', 'b', 'one.jsonl'), 'utf8')).toBe('1\n');
    expect(readFileSync(join(root, 'two.jsonl'), 'utf8')).toBe('2\n');
    expect(statSync(join(root, 'two.jsonl')).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'a', 'b')).mode & 0o777).toBe(0o750 & ~process.umask());
    expect((readdirSync(root, { recursive: true }) as string[]).sort()).toEqual(['a', 'a/b', 'a/b/one.jsonl', 'two.jsonl']);
  });

  it('a name that is taken: conflict, the files and folders made before it removed, the old file as it was', async () => {
    const root = join(t.dir, 'taken');
    mkdirSync(root);
    writeFileSync(join(root, 'main.jsonl'), 'theirs\n');
    const e = await writeNewFiles([
      { path: join(root, 'sub', 'agents', 'agent-a.jsonl'), text: 'a\n' },
      { path: join(root, 'main.jsonl'), text: 'ours\n' },
    ]).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toMatchObject({ code: 'conflict', message: `${join(root, 'main.jsonl')} already exists; nothing was written` });
    expect(readdirSync(root, { recursive: true })).toEqual(['main.jsonl']);
    expect(readFileSync(join(root, 'main.jsonl'), 'utf8')).toBe('theirs\n');
  });

  it('a folder on the path that is a link to nowhere (a drive not mounted): the error says so; the link is left, never to be removed by hand', async () => {
    const root = join(t.dir, 'dangling');
    mkdirSync(root);
    const target = join(t.dir, 'unmounted', 'projects');
    symlinkSync(target, join(root, 'projects'));
    const e = await writeNewFiles([{ path: join(root, 'projects', 'p', 'main.jsonl'), text: 'x\n' }]).then(
      () => null,
      (x: Error) => x,
    );
    expect(e).toMatchObject({ code: 'not_found' });
    expect(e!.message).toContain(`${join(root, 'projects')} is a symbolic link to ${target}, which does not exist`);
    expect(e!.message).toContain('nothing was written');
    expect(e!.message).not.toMatch(/could not be removed|by hand/);
    expect(lstatSync(join(root, 'projects')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, 'projects'))).toBe(target);
    expect(readdirSync(root)).toEqual(['projects']);
  });
});
