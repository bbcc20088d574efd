// `sessync status` after `logout`: what is on a server cannot be known, so nothing is said to be unpushed or "not on
// the server yet"; text and --json say the server was not checked (not logged in). Real CLI, real `sessync serve`.
import { describe, expect, it } from 'vitest';
import { Machine, useServer } from './helpers.js';

describe('status when not logged in (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-status-out-');

  it('after logout: no "not on the server yet", no count to push; loggedIn and serverChecked false; back after login', async () => {
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/status-out.git' });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/status-out.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two', 'three');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']); // b's copy came from the server: nothing of it to push
    const before = await b.ok(['status', '--json']);
    expect(before).toMatchObject({ loggedIn: true, serverChecked: true, sessions: [{ session: id, unpushedEntries: 0 }] });
    expect(before.sessions[0].notOnServer).toBeUndefined();

    await b.ok(['logout', '--json']);
    const st = await b.ok(['status', '--json']);
    expect(st).toMatchObject({ server: null, loggedIn: false, serverChecked: false, serverError: { code: 'unauthorized' } });
    expect(st.sessions).toEqual([expect.objectContaining({ session: id, unpushedEntries: null, unpushedBytes: null, pendingBatch: false, waitingBatches: null })]);
    expect(st.sessions[0].notOnServer).toBeUndefined();
    const text = await b.ok(['status']);
    expect(text).not.toContain('not on the server yet');
    expect(text).not.toMatch(/\d+ to push/);
    expect(text).toContain('not logged in');
    expect(text).toMatch(new RegExp(`${id}  not checked \\(not logged in\\)`));

    // Logged in again, the state is the server's again: nothing to push.
    await b.login(rig.server);
    expect(await b.ok(['status', '--json'])).toMatchObject({ loggedIn: true, serverChecked: true, sessions: [{ session: id, unpushedEntries: 0 }] });
    expect(await b.ok(['status'])).toContain('1 session(s), 0 to push');
  });

  it('the server unreachable while logged in: the local figures stand, serverChecked false, loggedIn true', async () => {
    const a = new Machine(rig.root, 'c', { remote: 'git@github.com:acme/status-away.git' });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one');
    await a.ok(['sync', '--json']);
    await a.say(id, 'two');
    await rig.server.stop();
    try {
      const st = await a.ok(['status', '--json']);
      expect(st).toMatchObject({ loggedIn: true, serverChecked: false, sessions: [{ session: id, unpushedEntries: 1 }] });
    } finally {
      await rig.server.restart();
    }
  });
});
