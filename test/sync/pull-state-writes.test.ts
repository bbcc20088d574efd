// Durable client-state writes of a many-session pull into an empty machine, counted from the real process's fsyncs (strace): one per request at most.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, tracedRun } from './kill-rig.js';

const SESSIONS = 20;
/** One entry a batch (small batch bytes): 90 batches a session, so each session's pull is three pages. */
const ENTRIES = 90;

describe.skipIf(!hasStrace())('durable state writes of a many-session pull (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-writes-');

  it(`a first pull of ${SESSIONS} sessions makes at most one fsync of client state between one pull request and the next`, async () => {
    const remote = 'git@github.com:acme/pull-writes.git';
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'b', { remote });
    await a.login(rig.server);
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']); // makes the host id (a state write of its own) before the traced run
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));
    await a.ok(['push', '--all', '--json']);

    const trace = join(rig.root, 'pull.strace');
    const run = await tracedRun(b, ['pull', '--all'], trace);
    expect(run.code, run.err).toBe(0);
    const summary = JSON.parse(run.out) as { pulledEntries: number; createdSessions: number };
    expect(summary.pulledEntries).toBe(SESSIONS * ENTRIES);
    expect(summary.createdSessions).toBe(SESSIONS);

    // The trace in order: pull requests, and fsyncs of files under this machine's sync state (not its session files).
    const stateDir = join(b.home, 'sync') + '/';
    const windows: number[] = [0]; // fsyncs of client state before the first pull request, then between requests
    let journal = 0;
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      if (/POST \/v1\/(sessions\/[^ ]*\/pull|pulls) /.test(line)) windows.push(0);
      else if (/\b(fsync|fdatasync)\(\d+</.test(line) && line.includes(stateDir)) {
        windows[windows.length - 1]!++;
        if (line.includes('journal')) journal++;
      }
    }
    const requests = windows.length - 1;
    expect(requests, 'pull requests seen in the trace').toBeGreaterThanOrEqual(3);
    // Between one pull request and the next: at most one durable write (the journal's). After the last request the
    // journal is compacted into the sessions' own files: those writes are counted apart, below.
    const between = windows.slice(1, -1);
    expect(Math.max(...between), `fsyncs of client state between pull requests: ${between.join(' ')}`).toBeLessThanOrEqual(1);
    expect(journal).toBeLessThanOrEqual(requests);
    const compaction = windows[windows.length - 1]!;
    expect(compaction, 'compaction: at most one write per session (and the maps)').toBeLessThanOrEqual(SESSIONS + 3);
    console.log(`${requests} pull requests; fsyncs of client state before the first: ${windows[0]}; between requests: ${between.join(' ')}; after the last: ${compaction}`);

    // And what it pulled is all there, once, and remembered: a second pull has nothing to add.
    const again = (await b.ok(['pull', '--all', '--json'])) as { pulledEntries: number };
    expect(again.pulledEntries).toBe(0);
    for (const id of ids.slice(0, 3)) expect(readLog(b.fileOf(id)).ids).toHaveLength(ENTRIES);
  }, 120_000);
});
