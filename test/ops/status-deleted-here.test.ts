// `status` after `sessync rm <id>` (local) on a second machine: the session deleted here is shown as kept on the
// server, and the count of sessions with entries to pull leaves it out, in the text and in --json, because sync does
// not pull it back. Real parts: two machines (CLI processes, one SESSYNC_HOME each) on a real `sessync serve`.
import { describe, expect, it } from 'vitest';
import { syncedPair, useServer } from '../sync/helpers.js';

describe('status counts to pull without the sessions deleted here (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-status-rm-');

  it('rm here, more batches on the server: 0 to pull; a live session waiting still counts', async () => {
    const { a, b, id: gone } = await syncedPair(rig.root, ['a', 'b'], 'git@github.com:acme/status-deleted-here.git', rig.server, 'one', 'two');
    await b.ok(['rm', gone, '--json']);
    await a.say(gone, 'three'); // the server gets more of it after b deleted its copy
    await a.ok(['sync', '--json']);

    let text = await b.ok(['status']);
    expect(text).toContain(`${gone}  deleted here, kept on the server (sessync restore ${gone})`);
    expect(text).toMatch(/^server: http:\/\/\S+: 0 session\(s\) with entries to pull$/m);
    let json = await b.ok(['status', '--json']);
    expect(json).toMatchObject({ serverChecked: true, toPull: 0, toPush: 0 });
    expect(json.sessions).toEqual([expect.objectContaining({ session: gone, remoteOnly: true, deletedHere: true, waitingBatches: 0, restoreBatches: 2 })]);
    // What status says is what sync does: nothing is pulled.
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, createdSessions: 0 });

    // A session b has not got yet is counted beside it: the count is of what a sync pulls.
    const live = await a.newSession();
    await a.say(live, 'new on a');
    await a.ok(['sync', '--json']);
    text = await b.ok(['status']);
    expect(text).toMatch(/^server: http:\/\/\S+: 1 session\(s\) with entries to pull$/m);
    expect(text).toContain(`${live}  only on the server (1 batches)`);
    json = await b.ok(['status', '--json']);
    expect(json).toMatchObject({ toPull: 1 });
    expect(json.sessions).toEqual(expect.arrayContaining([expect.objectContaining({ session: live, remoteOnly: true, waitingBatches: 1 })]));
    // Per agent (several agents shown) the same count.
    const every = await b.ok(['status', '--agent', 'all', '--json']);
    expect(every.agents.pi).toMatchObject({ toPull: 1 });
    expect(every.toPull).toBe(1);
    expect((await b.ok(['sync', '--json'])).createdSessions).toBe(1);
    expect(await b.ok(['status', '--json'])).toMatchObject({ toPull: 0 });
  });
});
