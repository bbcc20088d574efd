// Durable client-state writes of a many-session first push, counted from the real process's fsyncs (strace): one per request at most.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, STATE_WRITE_CALLS, stateWritesAfter, tracedRun } from './kill-rig.js';

const SESSIONS = 50;
const ENTRIES = 12;

describe.skipIf(!hasStrace())('durable state writes of a many-session push (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-state-writes-');

  it(`a first push of ${SESSIONS} sessions makes at most one fsync of client state per request while requests go out`, async () => {
    // Small batches: each session is several batches, so the push takes many requests and many state changes.
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/state-writes.git', env: { SESSYNC_SYNC_BATCH_BYTES: '1200' } });
    await a.login(rig.server);
    await a.ok(['push', '--all', '--json']); // makes the host id (a state write of its own) before the traced run
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));

    const trace = join(rig.root, 'push.strace');
    const run = await tracedRun(a, ['push', '--all'], trace, { calls: STATE_WRITE_CALLS });
    expect(run.code, run.err).toBe(0);
    const summary = JSON.parse(run.out) as { pushedEntries: number; requests: number };
    expect(summary.pushedEntries).toBe(SESSIONS * ENTRIES);

    // The trace in order: requests that carry batches, and fsyncs of files under this machine's sync state.
    const stateDir = join(a.home, 'sync') + '/';
    const windows: number[] = [0]; // fsyncs of client state before the first request, then between requests
    let journal = 0;
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      if (/POST \/v1\/(sessions\/[^ ]*\/)?batches /.test(line)) windows.push(0);
      else if (/\b(fsync|fdatasync)\(\d+</.test(line) && line.includes(stateDir)) {
        windows[windows.length - 1]!++;
        if (line.includes('push-journal')) journal++;
      }
    }
    const requests = windows.length - 1;
    expect(requests, 'POST /v1/batches requests seen in the trace').toBeGreaterThan(3);
    expect(requests).toBeLessThanOrEqual(summary.requests);
    // Up to each request: at most one durable write (the journal's) since the request before it. After the last
    // request the journal is compacted into the pack: those writes are counted apart, below.
    const perRequest = windows.slice(0, -1);
    expect(Math.max(...perRequest), `fsyncs of client state before each request: ${perRequest.join(' ')}`).toBeLessThanOrEqual(1);
    expect(journal).toBeLessThanOrEqual(requests);
    const compaction = windows[windows.length - 1]!;
    // The end of the run, whatever the number of sessions: the pack (its file and its folder) and the project map.
    expect(compaction, 'fsyncs of client state after the last request').toBeLessThanOrEqual(3);
    const end = stateWritesAfter(trace, stateDir, /POST \/v1\/(sessions\/[^ ]*\/)?batches /);
    expect(end.fsyncs).toBe(compaction);
    expect(end.creates, 'files of client state created after the last request').toBeLessThanOrEqual(2);
    console.log(`${requests} requests; fsyncs of client state per request: ${perRequest.join(' ')}; after the last request: ${compaction} fsyncs, ${end.creates} files made`);

    // And what it pushed is all there, once: a second push has nothing to send.
    const again = (await a.ok(['push', '--all', '--json'])) as { pushedEntries: number; requests: number };
    expect(again.pushedEntries).toBe(0);
    for (const id of ids.slice(0, 3)) expect(readLog(a.fileOf(id)).ids).toHaveLength(ENTRIES);
  }, 120_000);
});
