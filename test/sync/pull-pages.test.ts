// A session re-created here from the server over several pull pages continues after the highest of this host's
// own seqs, not after the first page's.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/wire.js';
import { Machine, readLog, useServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/Pages.git';

describe('pull over several pages', () => {
  const rig = useServer(undefined, 'sessync-pages-');

  it('a re-created session continues after the last own seq on the server', async () => {
    // One entry per batch: more own batches than one pull page carries.
    const a = new Machine(rig.root, 'a', { remote: REMOTE, env: { SESSYNC_SYNC_BATCH_BYTES: '1' } });
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    const n = LIMITS.maxBatchesPerPull + 5;
    await a.say(id, ...Array.from({ length: n }, (_, i) => `entry ${i}`));
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: n });
    await b.ok(['pull', '--json']);
    await b.say(id, 'from b');
    await b.ok(['push', '--json']);

    // a loses its copy and the session's state; the pull brings the file back from the server.
    const statePath = a.ownStatePath(id); // a single-session push wrote it
    rmSync(a.fileOf(id));
    rmSync(statePath);
    expect(await a.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: n + 1 });
    expect((await a.syncState(id))?.nextSeq).toBe(n + 1);
    // b's entry came on an earlier page than its parent, so the last line is not the leaf: a checkout marker
    // (written by the pull, pushed by the next push) makes pi's leaf sessync's again.
    const log = readLog(a.fileOf(id));
    const marked = log.entries.at(-1)!.customType === 'sessync.checkout';
    await a.say(id, 'next');
    const r = await a.run(['push', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ pushedEntries: marked ? 2 : 1 });
    await b.ok(['pull', '--json']);
    expect(readLog(b.fileOf(id)).entries).toHaveLength(n + (marked ? 3 : 2));
  }, 120_000);
});
