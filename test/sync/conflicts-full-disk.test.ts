// The other version of a clashing entry, set aside on a disk that fills up mid-write (b's home on a tmpfs, root
// only): the pull fails for that session with fs_full, and the retry after freeing space sets it aside whole.
import { readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendWithId } from './conflict-pair.js';
import { Machine, pairWithSession, useServer } from './helpers.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const REMOTE = 'git@github.com:Acme/Full.git';
const BIG = 'version A '.repeat(3000); // ~30 KB: more than the pages left free

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`conflicts-full-disk: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('conflicts set aside on a full disk', () => {
  const rig = useServer(undefined, 'sessync-conflicts-full-');
  const disk = useTmpfs('256k');

  it('a short write of the conflicts file: fs_full for the session, nothing half set aside; the retry sets it aside whole', async () => {
    const { a, b, id } = await pairWithSession(rig.root, ['a', 'b'], [REMOTE, REMOTE], rig.server, 'shared start');
    // b's machine with its home on the tmpfs (the same project folder): its sessions pulled into it.
    const bb = new Machine(disk.dir, 'b', { project: b.project });
    await bb.login(rig.server);
    await a.ok(['sync', '--json']);
    await bb.ok(['sync', '--json']);
    await appendWithId(a, id, 'clash-0001', BIG);
    await appendWithId(bb, id, 'clash-0001', 'version B');
    await a.ok(['sync', '--json']);

    const filler = join(disk.dir, 'filler');
    truncateSync(filler, fill(filler) - 4 * 4096);
    const r = await bb.run(['sync', '--json']);
    const asideFiles = () => {
      const dir = join(bb.serverState(), 'conflicts');
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      return names.map((n) => readFileSync(join(dir, n), 'utf8'));
    };
    try {
      // The run's own files (the project map, the state) may fail after the session did: the error is the run's then.
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const err = r.stdout ? r.json().sessions.find((x: { session: string }) => x.session === id).error : JSON.parse(r.stderr.trim().split('\n').at(-1)!).error;
      expect(err).toMatchObject({ code: 'fs_full', retryable: true });
      for (const text of asideFiles()) expect(text === '' || text.endsWith('\n'), 'no half record set aside').toBe(true);
    } finally {
      rmSync(filler);
    }
    const again = await bb.ok(['sync', '--json']);
    expect(again.failed).toBe(0);
    const records = asideFiles().join('').split('\n').filter((l) => l !== '');
    expect(records).toHaveLength(1);
    expect(JSON.parse(records[0]!)).toMatchObject({ id: 'clash-0001', entry: { message: { content: BIG } } });
  }, 120_000);
});
