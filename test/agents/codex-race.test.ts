// The fork rule's race through sync (real files, real sessync processes, the real server): two machines push divergent
// continuations of one rollout before either pulls, a third syncs first; the server's order decides on all three.
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsStore } from '../../worker/store/fs-store.js';
import { useServer } from '../sync/helpers.js';
import { bMovesToFork, CodexMachine, convergeToOneFork, raced } from './codex-rig.js';

describe('Codex: continuations pushed at once, a third machine first to sync', () => {
  const rig = useServer(undefined, 'sessync-codexrace-');

  it('A, B and C end with the same rollouts and bytes, exactly one fork, and the continuation the server received first keeps the session', async () => {
    const remote = 'git@github.com:Acme/codex-race.git';
    const [a, b, c] = ['race-a', 'race-b', 'race-c'].map((n) => new CodexMachine(rig.root, n, { remote })) as [CodexMachine, CodexMachine, CodexMachine];
    for (const m of [a, b, c]) await m.login(rig.server);
    const { id, aOwn, bOwn } = await raced(a, b);

    // C syncs before either has pulled the other's, and A and B sync before C's fork can reach the server.
    const rc = await c.run(['sync']);
    expect(rc.code, rc.stderr).toBe(0);
    expect(rc.stderr).toContain('the one the server received first keeps the session');
    const fork = await bMovesToFork(b, id);
    // One set of rollouts on all three: the original, A's line of work as it was, and one fork holding B's.
    await convergeToOneFork([a, c, a, b, c, a, b], id, fork);
    expect(a.text(id)).toBe(aOwn);
    expect(a.text(fork).split('\n').slice(1)).toEqual(bOwn.split('\n').slice(1));
    expect(JSON.parse(a.text(fork).split('\n')[0]!)).toMatchObject({ type: 'session_meta', payload: { id: fork, forked_from_id: id } });
  });

  it('a server that cannot say which came first (a batch it cannot read): no fork is made by a guess; the next sync makes it', async () => {
    const remote = 'git@github.com:Acme/codex-race-unread.git';
    const [a, b] = ['unread-a', 'unread-b'].map((n) => new CodexMachine(rig.root, n, { remote })) as [CodexMachine, CodexMachine];
    for (const m of [a, b]) await m.login(rig.server);
    const { id, bOwn } = await raced(a, b);
    // A's first batch, which both machines pulled long ago and no pull of theirs reads again, goes missing on the server.
    const store = new FsStore(join(rig.server.dataDir!, 'blobs'));
    const batches = (await store.list({ prefix: 'a/' })).keys.filter((k) => k.includes(`/s/${id}/b/`));
    const first = batches.find((k) => k.endsWith('1') && batches.filter((o) => o.startsWith(k.slice(0, k.lastIndexOf('/')))).length === 2)!;
    renameSync(store.pathOf(first), `${store.pathOf(first)}.aside`);
    const r = await b.run(['sync']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/the server could not say which continuation of session .* it received first \(server: internal server error.*no fork is made until it can.*its Codex rollout is left as it is/);
    expect(b.text(id)).toBe(bOwn);
    expect(b.rollouts()).toHaveLength(1);
    // The server reads it again: the next sync decides, by the server's order.
    renameSync(`${store.pathOf(first)}.aside`, store.pathOf(first));
    await bMovesToFork(b, id);
    expect(b.rollouts()).toHaveLength(2);
  });
});
