// Sync state belongs to one server and account: after a login elsewhere every session goes to the new server in
// full (with its meta), and a second machine on that server resumes with the same entries.
import { describe, expect, it, afterAll, beforeAll } from 'vitest';
import { Machine, entrySet, readLog, startNodeServer, useServer, type TestServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/Switch.git';

describe('switching servers', () => {
  const rig = useServer(startNodeServer, 'sessync-switch-');
  let serverB: TestServer & { cleanup(): void };
  beforeAll(async () => {
    serverB = await startNodeServer();
  }, 90_000);
  afterAll(async () => {
    await serverB?.stop();
    serverB?.cleanup();
  });

  it('a login to another server pushes the whole session there with its meta; a machine on that server resumes it', async () => {
    const laptop = new Machine(rig.root, 'laptop', { remote: REMOTE });
    await laptop.login(rig.server);
    const id = await laptop.newSession();
    await laptop.say(id, 'one', 'two');
    expect(await laptop.ok(['push', '--json'])).toMatchObject({ pushedEntries: 2, failed: 0 });

    await laptop.login(serverB);
    const status = await laptop.ok(['status', '--json']);
    expect(status.sessions.find((s: { session: string }) => s.session === id)).toMatchObject({ unpushedEntries: 2 });
    expect(await laptop.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 2, failed: 0 });
    await laptop.say(id, 'three');
    expect(await laptop.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 1, failed: 0 });

    const desktop = new Machine(rig.root, 'desktop', { remote: 'https://github.com/Acme/Switch' });
    await desktop.login(serverB);
    expect(await desktop.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: 3, failed: 0 });
    const dFile = desktop.fileOf(id);
    expect(readLog(dFile).header.cwd).toBe(desktop.project); // meta reached B: filed under this project
    expect([...entrySet(dFile).entries()].sort()).toEqual([...entrySet(laptop.fileOf(id)).entries()].sort());
    const resumed = await desktop.ok(['resume', id.slice(0, 13), '--json']);
    expect(resumed).toBeTruthy();

    // Back on A: its own state is still there, only the new entry goes.
    await laptop.login(rig.server);
    expect(await laptop.ok(['push', '--json'])).toMatchObject({ pushedEntries: 1, failed: 0 });
  }, 120_000);
});
