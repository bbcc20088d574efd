// `sessync rm --remote` between two real machines (CLI processes) on a real server, on Node and on workerd: the
// other machine stops pushing and keeps its file, shares answer 410, `push --undelete` brings it back.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, readLog, startNodeServer, startWorkerdServer, useServer, type TestServer } from '../sync/helpers.js';

const REMOTE = 'git@github.com:acme/rm-app.git';

const backends: [string, () => Promise<TestServer & { cleanup(): void }>][] = [
  ['node (sessync serve)', startNodeServer],
  ['workerd (wrangler dev --local)', startWorkerdServer],
];

describe.each(backends)('rm --remote on %s', (_name, start) => {
  const rig = useServer(start, 'sessync-rm-');

  it('the other machine keeps its file, stops pushing, says so; shares answer 410; push --undelete puts it back', async () => {
    const laptop = new Machine(rig.root, 'laptop', { remote: REMOTE });
    const desktop = new Machine(rig.root, 'desktop', { remote: 'https://github.com/acme/rm-app' });
    await laptop.login(rig.server);
    await desktop.login(rig.server);
    const id = await laptop.newSession();
    await laptop.say(id, 'the api key is sk-ant-not-really', 'oops');
    await laptop.ok(['sync', '--json']);
    expect(await desktop.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1 });
    const old = new Machine(rig.root, 'old', { remote: REMOTE });
    await old.login(rig.server);
    expect(await old.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1 });
    const share = await laptop.ok(['share', id, '--no-redact', '--json']);
    const shareToken = new URL(share.url).pathname.split('/').pop();

    const rm = await laptop.ok(['rm', id, '--remote', '--json']);
    expect(rm).toMatchObject({ session: id, remote: true, localRemoved: true, sharesRevoked: 1 });
    expect(laptop.sessionFiles()).toEqual([]);
    expect((await fetch(`${rig.server.url}/v1/shares/${shareToken}/blob`)).status).toBe(410);

    // The desktop wrote more meanwhile: its next sync keeps the file, pushes nothing of it, and says why.
    await desktop.say(id, 'desktop: one more line');
    const dFile = desktop.fileOf(id);
    const before = entrySet(dFile);
    const r = await desktop.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`session ${id} was deleted on the server at .* \\(asked by host [0-9a-f-]+\\).*the local file .* is kept`));
    expect(r.stdout).toMatch(/1 session deleted on the server kept here, not pushed/);
    expect(entrySet(dFile)).toEqual(before);
    const again = await desktop.ok(['sync', '--json']);
    expect(again).toMatchObject({ pushedEntries: 0, requests: 1, deleted: [{ session: id, action: 'kept', path: dFile }] });
    expect((await desktop.ok(['push', '--json'])).requests).toBe(0);
    const st = await desktop.ok(['status', '--json']);
    expect(st.sessions).toEqual([expect.objectContaining({ session: id, deletedOnServer: { at: expect.any(String), host: expect.any(String) } })]);
    expect(await desktop.ok(['status'])).toMatch(/deleted on the server at .*, kept here and not pushed/);
    // A machine that has not synced since runs `push` alone (no feed asked): the server refuses the old copy.
    await old.say(id, 'old: appended before it heard of the deletion');
    const stale = await old.run(['push', '--json']);
    expect(stale.code).toBe(0);
    expect(stale.json()).toMatchObject({ pushedEntries: 0, failed: 0 });
    expect(existsSync(old.fileOf(id))).toBe(true);
    expect((await old.ok(['push', '--json'])).requests).toBe(0);
    // Nothing of it came back to the server: the laptop's pull finds nothing.
    expect(await laptop.ok(['pull', '--json'])).toMatchObject({ createdSessions: 0, pulledEntries: 0 });
    expect(laptop.sessionFiles()).toEqual([]);

    // Deliberately back: the whole desktop file goes up again, and the laptop gets it all.
    const undo = await desktop.ok(['push', id, '--undelete', '--json']);
    expect(undo.pushedEntries).toBe(3);
    expect(await laptop.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: 3 });
    expect(entrySet(laptop.fileOf(id))).toEqual(entrySet(dFile));
    expect(readLog(laptop.fileOf(id)).ids).toHaveLength(3);

    // Deleted again, this time the desktop applies deletions: its file goes.
    await laptop.ok(['rm', id, '--remote', '--keep-local', '--json']);
    expect(existsSync(laptop.fileOf(id))).toBe(true);
    const applied = await desktop.ok(['sync', '--apply-deletes', '--json']);
    expect(applied.deleted).toEqual([expect.objectContaining({ session: id, action: 'removed' })]);
    expect(existsSync(dFile)).toBe(false);
    // The laptop kept its file and does not push it back.
    await laptop.say(id, 'laptop: still here');
    expect(await laptop.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, deleted: [expect.objectContaining({ session: id, action: 'kept' })] });
  }, 120_000);

  it('rm without --remote removes only the local file, the server keeps it; rm of an unknown session is a clear not found', async () => {
    const m = new Machine(rig.root, 'solo', { remote: REMOTE });
    await m.login(rig.server);
    const id = await m.newSession();
    await m.say(id, 'hello');
    await m.ok(['push', '--json']);
    const other = new Machine(rig.root, 'solo-2', { remote: REMOTE });
    await other.login(rig.server);
    expect(await other.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1 });
    await other.say(id, 'from the other machine');
    await other.ok(['sync', '--json']);
    expect(await m.ok(['pull', '--json'])).toMatchObject({ pulledEntries: 1 });
    const r = await m.ok(['rm', id, '--json']);
    expect(r).toMatchObject({ session: id, remote: false, deletedHere: true });
    expect(m.sessionFiles()).toEqual([]);
    // Still on the server, and still synced by the other machine; deleted here, a pull leaves it so, and a restore
    // brings it back whole.
    await other.say(id, 'more from the other machine');
    await other.ok(['sync', '--json']);
    expect(await m.ok(['pull', '--json'])).toMatchObject({ createdSessions: 0, pulledEntries: 0 });
    expect(m.sessionFiles()).toEqual([]);
    expect((await m.ok(['restore', id, '--json'])).restored).toMatchObject([{ session: id }]);
    expect(entrySet(m.fileOf(id))).toEqual(entrySet(other.fileOf(id)));
    expect(entrySet(m.fileOf(id)).size).toBe(3);
    const unknown = await m.run(['rm', 'ffffffff-no-such', '--remote', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error).toMatchObject({ code: 'not_found' });
    const usage = await m.run(['rm', id, '--keep-local', '--json']);
    expect(usage.code).toBe(2);
  }, 60_000);
});
