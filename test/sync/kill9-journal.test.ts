// kill -9 of a many-session push at each step of its state journal (written, fsynced, acknowledged, pack written, files folded), then a re-run: nothing lost, nothing doubled, nothing acknowledged sent again.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { pendingLeft, runUntilKilled, storedIds } from './kill-rig.js';

const SESSIONS = 8;
const ENTRIES = 10;
/** Where the push kills itself ($SESSYNC_KILL_POINT), each after some requests have gone, so earlier ones are acknowledged. */
const POINTS = ['journal-written:2', 'journal-synced:2', 'batch-acknowledged:7', 'pack-written:1', 'pack-folded:1', 'journal-synced:1'];
/** Kills after the pack holds every acknowledgement: the re-run has nothing to send. */
const COMPACTED = new Set(['pack-written:1', 'pack-folded:1']);

describe('kill -9 at each step of the push journal', () => {
  const rig = useServer(startNodeServer, 'sessync-kill-journal-');

  it(`a push of ${SESSIONS} sessions killed at ${POINTS.length} journal steps, then re-run: every entry stored once, another machine gets them all`, async () => {
    // Small batches: each session is several batches, so a run is many requests and the kill lands mid-run.
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/kill-journal.git', env: { SESSYNC_SYNC_BATCH_BYTES: '800' } });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/kill-journal.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));
    const journal = () => join(a.serverState(), 'push-journal.jsonl'); // the folder is made by the first push
    let written = ENTRIES;
    for (const point of POINTS) {
      // Two sessions pushed alone first: their states in files of their own, which the compaction folds into the
      // pack. One of them grows again, so the killed run's state of it is newer than its file.
      await a.ok(['push', ids[0]!, '--json']);
      await a.ok(['push', ids[1]!, '--json']);
      await a.say(ids[1]!, `grown before the kill at ${point}`);
      const run = await runUntilKilled(a, ['push', '--all'], point);
      expect(run.signal, `push with ${point}: ${run.err}`).toBe('SIGKILL');
      // Killed before its compaction finished: the journal is what holds the newest states.
      expect(existsSync(journal()), `journal left by the kill at ${point}`).toBe(true);
      if (point.startsWith('batch-acknowledged')) expect(pendingLeft(a), 'a batch sent and not acknowledged in the journal').toBe(true);
      // The next run replays it, resends what was in flight (the server answers a retry), and finishes.
      const done = (await a.ok(['push', '--all', '--json'])) as { failed: number; pushedEntries: number };
      expect(done.failed).toBe(0);
      if (COMPACTED.has(point)) expect(done.pushedEntries, `pushed again after the kill at ${point}`).toBe(0);
      expect(existsSync(journal()), 'journal compacted away').toBe(false);
      for (const id of ids) {
        const onServer = await storedIds(rig.server, id);
        expect(new Set(onServer).size, `session ${id}: an entry stored twice after the kill at ${point}`).toBe(onServer.length);
        expect(onServer.sort(), `session ${id} after the kill at ${point}`).toEqual([...readLog(a.fileOf(id)).ids].sort());
      }
      // More to push for the next kill: each session grows.
      for (let n = 0; n < SESSIONS; n++) plantSession(a, n, ENTRIES, { from: written });
      written += ENTRIES;
    }
    await a.ok(['push', '--all', '--json']);
    await b.ok(['pull', '--all', '--json']);
    for (const id of ids) {
      // Session 1 also holds the appended lines (and the leaf markers the planted lines after them needed).
      expect(readLog(b.fileOf(id)).ids).toHaveLength(id === ids[1] ? readLog(a.fileOf(id)).ids.length : written);
      expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    }
  }, 180_000);

  it('a batch written down but not sent, whose lines then change in the file, is built again from the file (its body is not stored)', async () => {
    const a = new Machine(rig.root, 'c', { remote: 'git@github.com:acme/kill-journal-2.git' });
    await a.login(rig.server);
    const ids = [0, 1, 2].map((n) => plantSession(a, 100 + n, 5));
    const run = await runUntilKilled(a, ['push', '--all'], 'journal-synced:1'); // the batches are durable; no request has left
    expect(run.signal, run.err).toBe('SIGKILL');
    expect(pendingLeft(a)).toBe(true);
    // Another writer edits an entry in place (same length) below the pending batch's end.
    const path = a.fileOf(ids[0]!);
    writeFileSync(path, readFileSync(path, 'utf8').replace('session 100 entry 2 w', 'session 100 entry 2 W'));
    const r = await a.run(['push', '--all']); // notes go to stderr (--json keeps them out)
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('lost its body; re-reading it from the file');
    for (const id of ids) {
      const onServer = await storedIds(rig.server, id);
      expect(onServer.sort()).toEqual([...readLog(a.fileOf(id)).ids].sort());
    }
    // What the server has is the file as it is now.
    const b = new Machine(rig.root, 'd', { remote: 'git@github.com:acme/kill-journal-2.git' });
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    expect(readFileSync(b.fileOf(ids[0]!), 'utf8')).toContain('session 100 entry 2 W');
  }, 60_000);
});
