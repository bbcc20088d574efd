// A pull killed mid-way and run again chooses the same leaf as a pull that was never cut short, for a session whose
// two hosts each wrote a branch of more than a page: resumed or fresh, the 'merged' leaf rule sees the same union.
import { describe, expect, it } from 'vitest';
import { CHECKOUT_CUSTOM_TYPE } from '../../shared/entry.js';
import { LIMITS } from '../../shared/wire.js';
import { piView, plain, sessyncView } from '../pi/pi-view.js';
import { Machine, machineWithHost, readLog, useServer } from './helpers.js';
import { runUntilKilled } from './kill-rig.js';

const env = { SESSYNC_SYNC_BATCH_BYTES: '1' }; // one entry a batch: each branch spans more than a pull page
const LONG = LIMITS.maxBatchesPerPull + 5;

/** What a resume of the file continues: pi's and sessync's branch and messages, checkout markers left out. */
async function resumes(path: string): Promise<{ pi: unknown; sessync: unknown; entries: string[] }> {
  const markers = new Set(readLog(path).entries.filter((e) => e.customType === CHECKOUT_CUSTOM_TYPE).map((e) => String(e.id)));
  const view = (v: { branch: string[]; messages: unknown[] }) => ({ branch: v.branch.filter((x) => !markers.has(x)), messages: v.messages });
  const entries = readLog(path).ids.filter((x) => !markers.has(x)).sort();
  return { pi: view(plain(piView(path))), sessync: view(plain(await sessyncView(path))), entries };
}

describe('a resumed pull of two hosts\' concurrent branches', () => {
  const rig = useServer(undefined, 'sessync-resumed-leaf-');

  it.each([
    ['host-a (served first)', 'pull-merged:1', 'a'],
    ['host-a (served first)', 'pull-merged:2', 'a'],
    ['host-c (served last)', 'pull-merged:1', 'c'],
    ['host-c (served last)', 'pull-merged:2', 'c'],
  ])('the newest tip from %s, killed at %s then pulled again: the same leaf as an uninterrupted pull', async (_, point, newest) => {
    const box = `${rig.root}/${newest}-${point.replace(':', '-')}`;
    const REMOTE = `git@github.com:acme/resumed-leaf-${newest}-${point.replace(':', '-')}.git`;
    const a = machineWithHost(box, 'a', 'host-a', { remote: REMOTE, env });
    const c = machineWithHost(box, 'c', 'host-c', { remote: REMOTE, env });
    const fresh = new Machine(box, 'fresh', { remote: REMOTE });
    const killed = new Machine(box, 'killed', { remote: REMOTE });
    for (const m of [a, c, fresh, killed]) await m.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'root');
    await a.ok(['push', '--json']);
    await c.ok(['pull', '--json']);
    // Two branches from the root, the newer written second; both pushed only then (concurrent).
    const [older, newer] = newest === 'a' ? [c, a] : [a, c];
    await older.say(id, ...Array.from({ length: LONG }, (_, i) => `older ${i}`));
    await newer.say(id, ...Array.from({ length: LONG }, (_, i) => `newer ${i}`));
    const tip = readLog(newer.fileOf(id)).ids.at(-1)!;
    await a.ok(['push', '--json']);
    await c.ok(['push', '--json']);

    await fresh.ok(['pull', '--json']);
    const k = await runUntilKilled(killed, ['pull'], point);
    expect(k.signal, k.err).toBe('SIGKILL');
    expect((await killed.syncState(id))?.pulling, 'the kill left the note of a pull under way').toBeDefined();
    await killed.ok(['pull', '--json']);

    const want = await resumes(fresh.fileOf(id));
    expect(want.sessync, 'the uninterrupted pull: pi and sessync resume the same branch').toEqual(want.pi);
    expect((want.pi as { branch: string[] }).branch.at(-1), 'the newest tip').toBe(tip);
    const got = await resumes(killed.fileOf(id));
    expect(got.entries, 'the same entries').toEqual(want.entries);
    expect(got.pi, 'pi resumes the branch an uninterrupted pull gives').toEqual(want.pi);
    expect(got.sessync, 'sessync\'s leaf is the one an uninterrupted pull gives').toEqual(want.sessync);
  }, 180_000);
});
