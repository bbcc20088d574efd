// Atomic writes on a full disk (a 64 KiB tmpfs, root only): the old file keeps its bytes and no temp file is left.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeJsonAtomic } from '../../cli/store/atomic-json.js';
import { fill, smallTmpfs } from '../helpers/full-disk.js';

const tmpfs = smallTmpfs('64k');
if (typeof tmpfs === 'string') console.warn(`atomic-write-full: skipped: ${tmpfs}`);

describe.skipIf(typeof tmpfs === 'string')('atomic writes when the disk fills up', () => {
  const dir = typeof tmpfs === 'string' ? '' : tmpfs.dir;
  afterAll(() => {
    if (typeof tmpfs !== 'string') tmpfs.cleanup();
  });

  const writers: [name: string, write: (path: string, text: string) => Promise<void>][] = [
    ['writeFileAtomic', writeFileAtomic],
    ['writeJsonAtomic', (path, text) => writeJsonAtomic(path, { text })],
  ];

  it.each(writers)('%s: fails with ENOSPC, the old file whole, no temp file left', async (name, write) => {
    const folder = join(dir, name);
    mkdirSync(folder);
    const path = join(folder, 'file.json');
    await write(path, 'old');
    const before = readFileSync(path);
    const filler = join(dir, 'filler');
    fill(filler);
    try {
      const e = await write(path, 'new '.repeat(5000)).then(() => null, (x: NodeJS.ErrnoException) => x);
      expect(e?.code).toBe('ENOSPC');
      expect(readFileSync(path).equals(before)).toBe(true);
      expect(readdirSync(folder)).toEqual(['file.json']);
    } finally {
      rmSync(filler);
    }
  });
});
