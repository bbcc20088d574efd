// `sessync restore` with real CLI processes on a real `sessync serve`: a session this machine pushed itself comes back
// whole (its own batches too), in its file's order, and restoring one session leaves the other deleted ones deleted.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, plantSession, readLog, runCli, syncedPair, useServer } from '../sync/helpers.js';
import { startRefusingProxy } from '../sync/refusing-proxy.js';

// Each test its own project: a sync pulls every session of its project, other tests' ones too.
const remote = (name: string) => `git@github.com:acme/restore-${name}.git`;
const lastError = (stderr: string) => (JSON.parse(stderr.trimEnd().split('\n').at(-1)!) as { error: { code: string; message: string } }).error;

describe('restore (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-restore-');

  it('a session only this machine pushed, removed here: restore brings it back byte for byte, where it was', async () => {
    const a = new Machine(rig.root, 'own', { remote: remote('own') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['sync', '--json']);
    await a.say(id, 'three');
    await a.ok(['sync', '--json']); // a second batch of this host's
    const file = a.fileOf(id);
    const before = readFileSync(file);

    await a.ok(['rm', id, '--json']);
    expect(existsSync(file)).toBe(false);
    const back = await a.ok(['restore', id.slice(0, 13), '--json']);
    expect(back.restored).toMatchObject([{ session: id, path: file, pulled: { entries: 3 } }]);
    expect(readFileSync(file).equals(before)).toBe(true);

    // Its state goes on from the server's: nothing pushed or pulled again, and the next entry is pushed once.
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    await a.say(id, 'four');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 1, failed: 0 });
    const c = new Machine(rig.root, 'own-c', { remote: remote('own') });
    await c.login(rig.server);
    await c.ok(['sync', '--json']);
    expect(readLog(c.fileOf(id)).ids).toEqual(readLog(file).ids);
    expect(readLog(file).ids).toHaveLength(4);
  });

  it('a restore killed (SIGKILL) once the file is written, before its state is saved: the file stands, nothing goes twice', async () => {
    const a = new Machine(rig.root, 'kill', { remote: remote('kill') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['sync', '--json']);
    const file = a.fileOf(id);
    const before = readFileSync(file);
    await a.ok(['rm', id, '--json']);

    const killed = await runCli(['restore', id, '--json', '--cwd', a.project], { env: { ...a.env, SESSYNC_KILL_POINT: 'pull-merged:1' } });
    expect(killed.code).not.toBe(0);
    expect(readFileSync(file).equals(before)).toBe(true);
    // The state it had before the rm describes this very file: nothing is pushed or pulled again.
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    expect(readFileSync(file).equals(before)).toBe(true);
    const c = new Machine(rig.root, 'kill-c', { remote: remote('kill') });
    await c.login(rig.server);
    await c.ok(['sync', '--json']);
    expect(readLog(c.fileOf(id)).ids).toEqual(readLog(file).ids);
  });

  // Ctrl-C lands at the journal's write, before its fsync: node runs a signal's handler on a later turn of its loop,
  // so a signal sent at the fsync's end (as SIGKILL is) would come once the page request is out, and the restore end.
  for (const how of [
    { what: 'killed (SIGKILL)', env: { SESSYNC_KILL_POINT: 'journal-synced:1' } },
    { what: 'stopped by Ctrl-C (SIGINT)', env: { SESSYNC_KILL_POINT: 'journal-written:1', SESSYNC_KILL_SIGNAL: 'SIGINT' } },
  ]) {
    it(`a restore ${how.what} before its first page: still deleted here, and restore again brings it back whole`, async () => {
      const a = new Machine(rig.root, `early-${how.what.length}`, { remote: remote(`early-${how.what.length}`) });
      await a.login(rig.server);
      const id = await a.newSession();
      await a.say(id, 'one', 'two');
      await a.ok(['sync', '--json']);
      const file = a.fileOf(id);
      const before = readFileSync(file);
      await a.ok(['rm', id, '--json']);

      // The journal's flush before the first page request: nothing of the session is written yet.
      const cut = await runCli(['restore', id, '--json', '--cwd', a.project], { env: { ...a.env, ...how.env } });
      expect(cut.code).not.toBe(0);
      // Ctrl-C is handled as push and pull handle it: stopped before the request, exit 130 with interrupted.
      if (how.env.SESSYNC_KILL_SIGNAL) expect([cut.code, lastError(cut.stderr).code], cut.stderr).toEqual([130, 'interrupted']);
      expect(existsSync(file)).toBe(false);
      const row = (await a.ok(['status', '--json'])).sessions.find((x: { session: string }) => x.session === id);
      expect(row).toMatchObject({ deletedHere: true });
      expect(await a.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, failed: 0 });
      expect(existsSync(file)).toBe(false); // sync still leaves it deleted here
      await a.ok(['restore', id, '--json']);
      expect(readFileSync(file).equals(before)).toBe(true);
      expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    });
  }

  it('a restore whose pull the server refuses says why and that the session is still deleted here, not that nothing matched', async () => {
    const proxy = await startRefusingProxy(rig.server.url);
    try {
      const a = new Machine(rig.root, 'refused', { remote: remote('refused') });
      await a.login({ ...rig.server, url: proxy.url });
      const id = await a.newSession();
      await a.say(id, 'one');
      await a.ok(['sync', '--json']);
      await a.ok(['rm', id, '--json']);
      proxy.refuse = true;
      const r = await a.run(['restore', id, '--json']);
      proxy.refuse = false;
      expect(r.code).toBe(1);
      const err = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error;
      expect(err.code).not.toBe('not_found');
      expect(err.message).toContain('mock refusal');
      expect(err.message).toContain('still deleted here');
      await a.ok(['restore', id, '--json']); // and it is: the same command, once the server takes it
      expect(readLog(a.fileOf(id)).ids.length).toBeGreaterThan(0);
    } finally {
      proxy.close();
    }
  });

  it('a restore of many pages killed (SIGKILL) after its first: the next sync brings the rest of this machine\'s own batches', async () => {
    // One entry a batch (small batches): 50 batches of this host's, more than one pull page holds.
    const a = new Machine(rig.root, 'pages', { remote: remote('pages'), env: { SESSYNC_SYNC_BATCH_BYTES: '300' } });
    await a.login(rig.server);
    const id = plantSession(a, 1, 50);
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 50, failed: 0 });
    const file = a.fileOf(id);
    const before = readFileSync(file);
    await a.ok(['rm', id, '--json']);

    const killed = await runCli(['restore', id, '--json', '--cwd', a.project], { env: { ...a.env, SESSYNC_KILL_POINT: 'pull-merged:1' } });
    expect(killed.code).not.toBe(0);
    expect(readLog(file).ids.length).toBeLessThan(50); // the first page only
    // The next sync pulls the rest before it pushes: nothing of the server's goes back as this machine's own.
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, failed: 0 });
    expect(readLog(file).ids).toEqual(Array.from({ length: 50 }, (_, i) => `s1-e${i}`));
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`a restore of many pages stopped by ${signal} after its first: exit ${signal === 'SIGINT' ? 130 : 143}, interrupted, state saved; ${signal === 'SIGINT' ? 'restore' : 'sync'} again brings the rest`, async () => {
      const a = new Machine(rig.root, `pages-${signal}`, { remote: remote(`pages-${signal}`), env: { SESSYNC_SYNC_BATCH_BYTES: '300' } });
      await a.login(rig.server);
      const id = plantSession(a, signal === 'SIGINT' ? 2 : 3, 50); // ids of their own: the server is shared
      expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 50, failed: 0 });
      const file = a.fileOf(id);
      const before = readFileSync(file);
      await a.ok(['rm', id, '--json']);

      const cut = await runCli(['restore', id, '--json', '--cwd', a.project], { env: { ...a.env, SESSYNC_KILL_POINT: 'pull-merged:1', SESSYNC_KILL_SIGNAL: signal } });
      expect([cut.code, lastError(cut.stderr).code], cut.stderr).toEqual([signal === 'SIGINT' ? 130 : 143, 'interrupted']);
      expect(lastError(cut.stderr).message).toContain(signal);
      // Stopped before its next request with its state written out: no journal left for the next run to replay.
      expect(existsSync(join(a.serverState(), 'push-journal.jsonl')), 'a journal left behind').toBe(false);
      expect(readLog(file).ids.length).toBeLessThan(50); // the first page only
      // The same command finishes it (as the error says); or, as after a kill, the next sync pulls the rest before it
      // pushes: nothing of the server's goes back as this machine's.
      if (signal === 'SIGINT') expect((await a.ok(['restore', id, '--json'])).restored).toMatchObject([{ session: id, path: file }]);
      else expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, failed: 0 });
      expect(readFileSync(file).equals(before)).toBe(true);
      expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    });
  }

  it('entries of two machines, this one\'s among them: restore brings all of them back in the order the file had', async () => {
    const { a, b, id } = await syncedPair(rig.root, ['mix-a', 'mix-b'], remote('mix'), rig.server, 'a one', 'a two');
    await b.say(id, 'b one');
    await b.ok(['sync', '--json']);
    await a.ok(['sync', '--json']);
    await a.say(id, 'a three');
    await a.ok(['sync', '--json']);
    const file = a.fileOf(id);
    const before = readFileSync(file);
    const ids = readLog(file).ids;
    expect(ids).toHaveLength(4);

    await a.ok(['rm', id, '--json']);
    const back = await a.ok(['restore', id, '--json']);
    expect(back.restored).toMatchObject([{ session: id, path: file, pulled: { entries: 4 } }]);
    expect(readLog(file).ids).toEqual(ids);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
  });

  it('restore <one> brings back that one only: another session deleted here stays deleted through sync', async () => {
    const a = new Machine(rig.root, 'one-a', { remote: remote('one') });
    const b = new Machine(rig.root, 'one-b', { remote: remote('one') });
    await a.login(rig.server);
    await b.login(rig.server);
    const first = await a.newSession();
    await a.say(first, 'first');
    const second = await a.newSession();
    await a.say(second, 'second');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const secondFile = b.fileOf(second);
    await b.ok(['rm', first, '--json']);
    await b.ok(['rm', second, '--json']);

    const back = await b.ok(['restore', first, '--json']);
    expect(back.restored).toMatchObject([{ session: first }]);
    expect(entrySet(b.fileOf(first))).toEqual(entrySet(a.fileOf(first)));
    // The other one: still deleted here, so sync leaves it, and restore of it still brings it back.
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 0, pulledEntries: 0, failed: 0 });
    expect(existsSync(secondFile)).toBe(false);
    const st = await b.ok(['status', '--json']);
    expect(st.sessions).toEqual(expect.arrayContaining([expect.objectContaining({ session: second, deletedHere: true })]));
    expect((await b.ok(['restore', second, '--json'])).restored).toMatchObject([{ session: second, path: secondFile }]);
    expect(entrySet(secondFile)).toEqual(entrySet(a.fileOf(second)));
  });
});
