// appendWhole on a file system that counts no blocks (ramfs; statfs says 0 of 0 free, as some FUSE mounts do): the
// room check has nothing to go by and must not refuse the append (root only: mounting needs it).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendWhole } from '../../cli/store/append-whole.js';

function mountRamfs(): { dir: string } | string {
  if (process.getuid?.() !== 0) return 'needs root to mount a ramfs';
  const dir = mkdtempSync(join(tmpdir(), 'sessync-ramfs-'));
  try {
    execFileSync('mount', ['-t', 'ramfs', 'ramfs', dir], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t ramfs failed: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  }
  return { dir };
}

const unavailable = process.getuid?.() === 0 ? null : 'needs root to mount a ramfs';
if (unavailable) console.warn(`append-whole-no-block-count: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('appendWhole where statfs counts no blocks', () => {
  let dir = '';
  // Mounted here, not at load: a run that skips these tests mounts nothing.
  beforeAll(() => {
    const m = mountRamfs();
    if (typeof m === 'string') throw new Error(m);
    dir = m.dir;
    // The premise: this file system reports no blocks at all, so "free" by statfs is 0.
    expect(statfsSync(dir).blocks).toBe(0);
  });
  afterAll(() => {
    if (!dir) return;
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('appends the whole text', async () => {
    const path = join(dir, 'session.jsonl');
    writeFileSync(path, '{"type":"session"}\n');
    const text = Buffer.from(JSON.stringify({ type: 'message', text: 'x'.repeat(10_000) }) + '\n');
    const fh = await open(path, 'a');
    try {
      await appendWhole(fh, path, text);
    } finally {
      await fh.close();
    }
    expect(readFileSync(path, 'utf8')).toBe('{"type":"session"}\n' + text.toString('utf8'));
  });
});
