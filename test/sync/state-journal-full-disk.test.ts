// The sync journal on a full disk (a 64 KiB tmpfs, root only): a flush that does not fit fails and leaves the journal as
// it was, so the flush after space is freed appends whole records and the journal replays.
import { readFileSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateJournal } from '../../cli/sync/state-journal.js';
import { isSessyncError } from '../../shared/errors.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`state-journal-full-disk: skipped: ${unavailable}`);

interface S {
  session: string;
  pad: string;
}

describe.skipIf(unavailable !== null)('the sync journal when the disk fills up', () => {
  const disk = useTmpfs('64k');

  it('a flush too big for the room left fails, the journal keeps only its whole records; the next flush replays', async () => {
    const path = join(disk.dir, 'push-journal.jsonl');
    const filler = join(disk.dir, 'filler');
    const j = new StateJournal<S>(path);
    try {
      await fullThenFreed(j, path, filler);
    } finally {
      // Closed whatever failed: an open journal keeps the tmpfs busy and its unmount fails. Its own error is the test's.
      await j.close().catch(() => undefined);
    }
  });
});

/** The test's steps: a flush that fits, one that does not, one after space is freed; then the replay. */
async function fullThenFreed(j: StateJournal<S>, path: string, filler: string): Promise<void> {
  j.set('s1', { session: 's1', pad: 'small' });
  await j.flush();
  const before = readFileSync(path);
  // About 16 KiB left; the next state is 40 KB.
  truncateSync(filler, fill(filler) - 4 * 4096);
  try {
    j.set('s2', { session: 's2', pad: 'x'.repeat(40_000) });
    const e = await j.flush().then(() => null, (x: unknown) => x);
    expect(isSessyncError(e, 'fs_full'), String(e)).toBe(true);
    expect(readFileSync(path).equals(before), 'nothing of the failed flush left in the journal').toBe(true);
  } finally {
    rmSync(filler);
  }
  j.set('s3', { session: 's3', pad: 'after' });
  await j.flush(); // s2 again (not durable before) and s3
  await j.close();
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const replay = await StateJournal.replay<S>(path);
  expect([...replay!.states.keys()].sort()).toEqual(['s1', 's2', 's3']);
  expect(replay!.states.get('s2')?.pad).toHaveLength(40_000);
  expect(replay!.id).toBe(j.id);
}
