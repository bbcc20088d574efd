// Writes on a full disk (a 64 KiB tmpfs, root only): an atomic write keeps the old file and leaves no temp file; an
// append to an agent's own file leaves it as it was.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic, writeJsonAtomic } from '../../cli/store/atomic-json.js';
import { appendLines } from '../../cli/agents/claude-export.js';
import { SessyncError } from '../../shared/errors.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`full-disk-writes: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('writes when the disk fills up', () => {
  const disk = useTmpfs('64k');

  const writers: [name: string, write: (path: string, text: string) => Promise<void>][] = [
    ['writeFileAtomic', writeFileAtomic],
    ['writeJsonAtomic', (path, text) => writeJsonAtomic(path, { text })],
  ];

  it.each(writers)('%s: fails with ENOSPC, the old file whole, no temp file left', async (name, write) => {
    const dir = disk.dir;
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

  it('appendLines (Claude Code and Codex files): the disk filling up mid-write leaves the file as it was', async () => {
    const dir = disk.dir;
    const folder = join(dir, 'agent');
    mkdirSync(folder);
    const path = join(folder, 'session.jsonl');
    await appendLines(path, ['{"type":"user","n":1}']);
    const before = readFileSync(path);
    const filler = join(dir, 'filler');
    fill(filler);
    try {
      // Bigger than the slack of the file's last page: part of it is written, then ENOSPC.
      const e = await appendLines(path, [JSON.stringify({ type: 'user', text: 'x'.repeat(20_000) })]).then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(SessyncError);
      expect(e).toMatchObject({ code: 'fs_full', retryable: true });
      expect((e as SessyncError).message).toContain(path);
      expect(readFileSync(path).equals(before)).toBe(true);
    } finally {
      rmSync(filler);
    }
  });
});
