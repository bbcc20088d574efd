// `sessync status` for this project: sessions only the server has (matched by project key), and a server that
// holds fewer of this machine's batches than the state says (restored from a backup), which the next sync repairs.
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/Status.git';
type Row = { session: string; remoteOnly: boolean; waitingBatches: number | null; serverBehind?: boolean };

describe('status against the server', () => {
  const rig = useServer(undefined, 'sessync-status-');

  it("lists this project's server-only sessions without --all, and flags and repairs a server behind our state", async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: 'https://github.com/Acme/Status' });
    const other = new Machine(rig.root, 'o', { remote: 'git@github.com:Acme/Other.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    await other.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['push', '--json']);
    const elsewhere = await other.newSession();
    await other.say(elsewhere, 'not this project');
    await other.ok(['push', '--json']);

    const bRows: Row[] = (await b.ok(['status', '--json'])).sessions;
    expect(bRows).toEqual([expect.objectContaining({ session: id, remoteOnly: true, waitingBatches: 1 })]);

    // The server restored from an older backup, seen from a's side: its state thinks 4 batches were acknowledged.
    await a.writeSyncState({ ...(await a.syncState(id))!, nextSeq: 5 });
    const aRows: Row[] = (await a.ok(['status', '--json'])).sessions;
    expect(aRows.find((r) => r.session === id)).toMatchObject({ serverBehind: true });
    expect(await a.ok(['status'])).toContain('the server has fewer of my batches');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 2, failed: 0 });
    expect((await a.ok(['status', '--json'])).sessions.find((r: Row) => r.session === id).serverBehind).toBeUndefined();
    // --all fetches both sessions, and counts them as checked.
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ createdSessions: 2, sessionsChecked: 2 });
    const ids = readLog(b.fileOf(id)).ids;
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(2);
  }, 90_000);

  it('push alone (no heads asked) learns from the refused seq that the server lost batches and sends the whole file', async () => {
    const a = new Machine(rig.root, 'pa', { remote: REMOTE });
    const b = new Machine(rig.root, 'pb', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['push', '--json']);
    await a.writeSyncState({ ...(await a.syncState(id))!, nextSeq: 5 });
    await a.say(id, 'three');
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 3, failed: 0 });
    await b.ok(['pull', '--json']);
    const ids = readLog(b.fileOf(id)).ids;
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  }, 60_000);
});
