// The fork rule's race through sync (real files, real sessync processes, the real server): two machines push divergent
// continuations of one rollout before either pulls, a third syncs first; the server's order decides on all three.
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { CodexMachine, convergeToOneFork, lines, msg, newId, startRollout } from './codex-rig.js';

describe('Codex: continuations pushed at once, a third machine first to sync', () => {
  const rig = useServer(undefined, 'sessync-codexrace-');

  it('A, B and C end with the same rollouts and bytes, exactly one fork, and the continuation the server received first keeps the session', async () => {
    const remote = 'git@github.com:Acme/codex-race.git';
    const [a, b, c] = ['race-a', 'race-b', 'race-c'].map((n) => new CodexMachine(rig.root, n, { remote })) as [CodexMachine, CodexMachine, CodexMachine];
    for (const m of [a, b, c]) await m.login(rig.server);
    const id = newId();
    startRollout(a, id, msg('first', '2026-01-01T00:00:01.000Z'));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    expect(b.text(id)).toBe(a.text(id));

    // Both continue offline. B's line is written earlier (its time), A's later; A's push reaches the server first.
    appendFileSync(b.rolloutOf(id), lines(msg('third on B', '2026-01-01T09:00:00.000Z')));
    appendFileSync(a.rolloutOf(id), lines(msg('third on A', '2026-01-01T10:00:00.000Z')));
    const aOwn = a.text(id);
    const bOwn = b.text(id);
    expect(await a.ok(['push', '--json'])).toMatchObject({ failed: 0, pushedEntries: 1 });
    expect(await b.ok(['push', '--json'])).toMatchObject({ failed: 0, pushedEntries: 1 });

    // C syncs before either has pulled the other's, and A and B sync before C's fork can reach the server.
    const rc = await c.run(['sync']);
    expect(rc.code, rc.stderr).toBe(0);
    expect(rc.stderr).toContain('the one the server received first keeps the session');
    const rb = await b.run(['sync']);
    expect(rb.code, rb.stderr).toBe(0);
    const told = new RegExp(`your work on this machine in session ${id} continues as session ([0-9a-f-]{36})`).exec(rb.stderr);
    expect(told, rb.stderr).not.toBeNull();
    const fork = told![1]!;
    // One set of rollouts on all three: the original, A's line of work as it was, and one fork holding B's.
    await convergeToOneFork([a, c, a, b, c, a, b], id, fork);
    expect(a.text(id)).toBe(aOwn);
    expect(a.text(fork).split('\n').slice(1)).toEqual(bOwn.split('\n').slice(1));
    expect(JSON.parse(a.text(fork).split('\n')[0]!)).toMatchObject({ type: 'session_meta', payload: { id: fork, forked_from_id: id } });
  });
});
