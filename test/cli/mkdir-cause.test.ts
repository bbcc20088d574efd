// mkdirPrivate on a read-only mount (a tmpfs remounted ro, root only): EROFS for the first missing folder, not the
// ENOENT Node's recursive mkdir answers (nodejs/node#47098), so the user is not told to create a folder.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdirPrivate, mkdirPrivateSync } from '../../cli/store/private-fs.js';
import { tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`mkdir-cause: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('mkdirPrivate on a read-only mount', () => {
  const disk = useTmpfs('64k');
  beforeAll(() => {
    mkdirSync(join(disk.dir, 'there'));
    execFileSync('mount', ['-o', 'remount,ro', disk.dir]);
  });

  const variants: [name: string, make: (d: string) => Promise<string[]>][] = [
    ['mkdirPrivate', mkdirPrivate],
    ['mkdirPrivateSync', async (d) => mkdirPrivateSync(d)],
  ];

  it.each(variants)('%s: EROFS naming the first folder it could not make', async (_name, make) => {
    const e = await make(join(disk.dir, 'there', 'a', 'b')).then(() => null, (x: NodeJS.ErrnoException) => x);
    expect(e).toMatchObject({ code: 'EROFS', syscall: 'mkdir', path: join(disk.dir, 'there', 'a') });
  });

  it.each(variants)('%s: a folder that is there is still no error', async (_name, make) => {
    expect(await make(join(disk.dir, 'there'))).toEqual([]);
  });
});
