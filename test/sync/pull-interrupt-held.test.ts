// A killed pull's session that cannot be pulled again: its push is held and said so (a file size limit makes the
// re-pull fail every time), and a deletion on the server met while pulling it again is recorded, even by `push`.
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKOUT_CUSTOM_TYPE } from '../../shared/entry.js';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { startRefusingProxy } from './refusing-proxy.js';
import { headKey, heads, runUntilKilled, storedIds } from './kill-rig.js';

describe('a killed pull\'s session that the next run cannot pull again', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-held-');

  it('a re-pull that fails every time holds the push and says so (code, pushHeld, exit 1); once it can, only the entry written here is pushed', async () => {
    const remote = 'git@github.com:acme/pull-held.git';
    const a = new Machine(rig.root, 'held-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'held-b', { remote });
    for (const m of [a, b]) await m.login(rig.server);
    const id = plantSession(a, 500, 120); // three pages
    await a.ok(['push', '--all', '--json']);
    const stored = (await storedIds(rig.server, id)).sort();
    // Killed after the flush before the second request: the file holds the first page, the note is durable.
    const k = await runUntilKilled(b, ['pull', '--all'], 'journal-synced:2');
    expect(k.signal, k.err).toBe('SIGKILL');
    await b.say(id, 'written on b after the kill');
    const added = readLog(b.fileOf(id)).ids.at(-1)!;
    const before = await headKey(rig.server);
    // No file may grow past its size now (EFBIG, SIGXFSZ ignored): the re-pull's append fails, run after run.
    const kib = Math.floor(statSync(b.fileOf(id)).size / 1024);
    const limited = (argv: string[]) => ['bash', '-c', `trap "" XFSZ; ulimit -f ${kib}; exec "$@"`, 'limited', ...argv];
    for (const cmd of ['sync', 'push']) {
      const r = await b.run([cmd, '--all', '--json'], { wrap: limited });
      expect(r.code, `${cmd}: ${r.stderr}`).toBe(1);
      const s = r.json() as { failed: number; pushHeld: number; pushedEntries: number; sessions: { session: string; pushHeld?: boolean; error?: { code: string; message: string } }[] };
      const row = s.sessions.find((x) => x.session === id)!;
      expect([s.failed, s.pushHeld, s.pushedEntries], `${cmd}: failed, held, pushed`).toEqual([1, 1, 0]);
      expect(row.pushHeld, cmd).toBe(true);
      expect(row.error?.code, cmd).toBe('fs_error');
      expect(row.error?.message, cmd).toMatch(/EFBIG.*cut short.*push waits until a pull of it succeeds/s);
      expect(await headKey(rig.server), `${cmd}: nothing pushed`).toEqual(before);
    }
    // For a person: the session's note on stderr, the summary line says it.
    const human = await b.run(['sync', '--all'], { wrap: limited });
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(new RegExp(`session ${id}: .*push waits until a pull of it succeeds`, 's'));
    expect(human.stdout).toMatch(/1 session failed \(1 with its push held until an interrupted pull of it is redone\)/);
    const r = (await b.ok(['sync', '--all', '--json'])) as { failed: number; pushHeld: number; pushedEntries: number };
    expect([r.failed, r.pushHeld]).toEqual([0, 0]);
    const onServer = await storedIds(rig.server, id);
    const markers = readLog(b.fileOf(id)).entries.filter((e) => e.customType === CHECKOUT_CUSTOM_TYPE).map((e) => String(e.id));
    const pushed = onServer.filter((x) => !stored.includes(x));
    expect(pushed.filter((x) => !markers.includes(x)), 'entries b pushed as its own').toEqual([added]);
    expect(new Set(onServer).size, 'no entry stored twice').toBe(onServer.length);
    expect([...readLog(b.fileOf(id)).ids].sort()).toEqual([...onServer].sort());
  }, 120_000);

  it('a killed first pull, then a re-pull the server refuses: status counts none of the server\'s entries as to push, nor the session as not on the server', async () => {
    const proxy = await startRefusingProxy(rig.server.url);
    try {
      const remote = 'git@github.com:acme/pull-held-status.git';
      const a = new Machine(rig.root, 'hs-a', { remote });
      const b = new Machine(rig.root, 'hs-b', { remote });
      await a.login(rig.server);
      await b.login({ ...rig.server, url: proxy.url });
      const id = plantSession(a, 700, 5);
      await a.ok(['push', '--json']);
      // Killed with the new file written and its cursor not saved: the note says the file was being created.
      const k = await runUntilKilled(b, ['pull'], 'pull-merged:1') // this project's only: other tests' sessions share the server;
      expect(k.signal, k.err).toBe('SIGKILL');
      const row = async () => (await b.ok(['status', '--json'])).sessions.find((x: { session: string }) => x.session === id);
      expect(await row()).toMatchObject({ unpushedEntries: 0 });
      expect((await row()).notOnServer, 'a killed pull made it from the server').toBeFalsy();
      proxy.refuse = true;
      const r = await b.run(['sync', '--json']);
      proxy.refuse = false;
      expect(r.code, r.stderr).toBe(1);
      expect((r.json() as { pushHeld: number }).pushHeld).toBe(1);
      // The failed re-pull kept the killed pull's own note (from the file's start), not one from the file's size then.
      expect((await b.syncState(id))?.pulling?.from).toBe(0);
      expect(await row()).toMatchObject({ unpushedEntries: 0 });
      expect(await b.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, failed: 0 });
    } finally {
      proxy.close();
    }
  }, 120_000);

  it('`push` of a session whose killed pull left its note, deleted on the server since: recorded as deleted and kept, as sync does, not a failure', async () => {
    const remote = 'git@github.com:acme/pull-held-gone.git';
    const a = new Machine(rig.root, 'gone-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'gone-b', { remote });
    for (const m of [a, b]) await m.login(rig.server);
    const id = plantSession(a, 600, 120);
    await a.ok(['push', '--all', '--json']);
    const k = await runUntilKilled(b, ['pull', id], 'journal-synced:2');
    expect(k.signal, k.err).toBe('SIGKILL');
    expect((await b.syncState(id))?.pulling, 'the killed pull\'s note').toBeDefined();
    await b.say(id, 'written on b after the kill');
    await a.ok(['rm', id, '--remote', '--json']);
    const file = b.fileOf(id);
    const size = statSync(file).size;
    const r = (await b.ok(['push', '--all', '--json'])) as { failed: number; pushedEntries: number; deleted: { session: string; action: string }[] };
    expect([r.failed, r.pushedEntries], 'push: failed, pushed').toEqual([0, 0]);
    expect(r.deleted.map((d) => `${d.session} ${d.action}`)).toEqual([`${id} kept`]);
    const st = await b.syncState(id);
    expect(st?.deleted, 'the deletion recorded').toBeDefined();
    expect(st?.pulling, 'the note dropped with what the server held').toBeUndefined();
    expect(statSync(file).size, 'the file kept as it was').toBe(size);
    // Left alone from now on, as a session whose tombstone a sync read.
    const again = (await b.ok(['push', '--all', '--json'])) as { failed: number; pushedEntries: number };
    expect([again.failed, again.pushedEntries]).toEqual([0, 0]);
    expect((await heads(rig.server)).filter((h) => h.session === id), 'nothing of it on the server').toEqual([]);
  }, 120_000);
});
