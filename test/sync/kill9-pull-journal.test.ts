// kill -9 of a pull (many sessions, or one) between a page's merge and its journaled cursor, and at the journal's steps, then a re-run: each entry once.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { runUntilKilled, storedIds } from './kill-rig.js';

const SESSIONS = 20;
/** One entry a batch (small batch bytes): 90 batches a session, three pull pages of at most 40 batches each. */
const ENTRIES = 90;
/**
 * Where the pull kills itself: in the first round of pages (new files written, no state durable yet), in the second
 * (cursors in the journal's memory, not flushed), after the journal's second flush, once the compaction wrote the
 * pack (the journal not yet removed), and once it removed the files it folded in.
 */
const POINTS = ['pull-merged:10', 'pull-merged:30', 'journal-folders-synced:1', 'journal-synced:2', 'pack-written:1', 'pack-folded:1'];
/** Kills after the pack holds every cursor: the re-run pulls nothing again. */
const COMPACTED = new Set(['pack-written:1', 'pack-folded:1']);

describe('kill -9 of a many-session pull', () => {
  const rig = useServer(startNodeServer, 'sessync-kill-pull-');

  it(`a pull of ${SESSIONS} new sessions killed at ${POINTS.length} points, then re-run: every file holds each entry once, as the server has them`, async () => {
    const remote = 'git@github.com:acme/kill-pull-journal.git';
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    await a.login(rig.server);
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));
    await a.ok(['push', '--all', '--json']);
    const stored = new Map<string, string[]>();
    for (const id of ids) stored.set(id, (await storedIds(rig.server, id)).sort());
    expect(stored.get(ids[0]!)).toHaveLength(ENTRIES);

    for (const [i, point] of POINTS.entries()) {
      const b = new Machine(rig.root, `b${i}`, { remote });
      await b.login(rig.server);
      const run = await runUntilKilled(b, ['pull', '--all'], point);
      expect(run.signal, `pull with ${point}: ${run.err}`).toBe('SIGKILL');
      // The next run recovers the journal (if the kill left one), pulls again what it had lost, and finishes.
      const done = (await b.ok(['pull', '--all', '--json'])) as { failed: number; pulledEntries: number; requests: number };
      expect(done.failed).toBe(0);
      expect(existsSync(join(b.serverState(), 'push-journal.jsonl')), 'journal compacted away').toBe(false);
      for (const id of ids) {
        const got = readLog(b.fileOf(id)).ids;
        expect(new Set(got).size, `session ${id}: an entry appended twice after the kill at ${point}`).toBe(got.length);
        expect([...got].sort(), `session ${id} after the kill at ${point}`).toEqual(stored.get(id));
        expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
      }
      // And the state says so: another pull has nothing to add.
      const again = (await b.ok(['pull', '--all', '--json'])) as { pulledEntries: number; requests: number };
      expect(again.pulledEntries, `a pull after the recovery from ${point}`).toBe(0);
      // Killed once the pack held every cursor: the recovery was a pull with nothing to fetch, as this one is.
      if (COMPACTED.has(point)) expect(done.requests, `requests of the pull after the kill at ${point}`).toBe(again.requests);
    }
  }, 240_000);
});

describe('kill -9 of a single-session pull (`resume <id>` of a session only on the server)', () => {
  const rig = useServer(startNodeServer, 'sessync-kill-pull-one-');
  /** 200 one-entry batches: five pages, pulled one request after another. */
  const MANY = 200;
  /**
   * The new file written, no state durable; a later page merged with its cursor only in the journal's memory; just
   * after the journal's second flush; and after the compaction wrote the state (to the session's own file: one
   * session's journal), before the journal was removed.
   */
  const ONE_POINTS = ['pull-merged:1', 'pull-merged:3', 'journal-folders-synced:1', 'journal-synced:2', 'compacted-one:1'];

  it(`killed at ${ONE_POINTS.length} points, then pulled again: the file holds each entry once, as the server has them`, async () => {
    const remote = 'git@github.com:acme/kill-pull-one.git';
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    await a.login(rig.server);
    const id = plantSession(a, 0, MANY);
    await a.ok(['push', '--all', '--json']);
    const stored = (await storedIds(rig.server, id)).sort();
    expect(stored).toHaveLength(MANY);

    for (const [i, point] of ONE_POINTS.entries()) {
      const b = new Machine(rig.root, `one${i}`, { remote });
      await b.login(rig.server);
      const run = await runUntilKilled(b, ['resume', id], point);
      expect(run.signal, `resume with ${point}: ${run.err}`).toBe('SIGKILL');
      // The file is here now (the first page made it): a pull of it recovers the journal and pulls what was lost.
      const done = (await b.ok(['pull', id, '--json'])) as { failed: number };
      expect(done.failed).toBe(0);
      expect(existsSync(join(b.serverState(), 'push-journal.jsonl')), 'journal compacted away').toBe(false);
      const got = readLog(b.fileOf(id)).ids;
      expect(new Set(got).size, `an entry appended twice after the kill at ${point}`).toBe(got.length);
      expect([...got].sort(), `after the kill at ${point}`).toEqual(stored);
      expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
      const again = (await b.ok(['pull', id, '--json'])) as { pulledEntries: number };
      expect(again.pulledEntries, `a pull after the recovery from ${point}`).toBe(0);
    }
  }, 240_000);
});
