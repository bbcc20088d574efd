// mkdirPrivate on a read-only mount (a tmpfs remounted ro, root only): EROFS for the first missing folder, not the
// ENOENT Node's recursive mkdir answers (nodejs/node#47098), so the user is not told to create a folder.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirPrivate, mkdirPrivateSync } from '../../cli/store/private-fs.js';
import { smallTmpfs } from '../helpers/full-disk.js';

const tmpfs = smallTmpfs('64k');
if (typeof tmpfs === 'string') console.warn(`mkdir-cause: skipped: ${tmpfs}`);

describe.skipIf(typeof tmpfs === 'string')('mkdirPrivate on a read-only mount', () => {
  const dir = typeof tmpfs === 'string' ? '' : tmpfs.dir;
  if (dir) {
    mkdirSync(join(dir, 'there'));
    execFileSync('mount', ['-o', 'remount,ro', dir]);
  }
  afterAll(() => {
    if (typeof tmpfs !== 'string') tmpfs.cleanup();
  });

  const variants: [name: string, make: (d: string) => Promise<string[]>][] = [
    ['mkdirPrivate', mkdirPrivate],
    ['mkdirPrivateSync', async (d) => mkdirPrivateSync(d)],
  ];

  it.each(variants)('%s: EROFS naming the first folder it could not make', async (_name, make) => {
    const e = await make(join(dir, 'there', 'a', 'b')).then(() => null, (x: NodeJS.ErrnoException) => x);
    expect(e).toMatchObject({ code: 'EROFS', syscall: 'mkdir', path: join(dir, 'there', 'a') });
  });

  it.each(variants)('%s: a folder that is there is still no error', async (_name, make) => {
    expect(await make(join(dir, 'there'))).toEqual([]);
  });
});
