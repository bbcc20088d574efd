// Durable client-state writes of a many-session pull into an empty machine, counted from the real process's fsyncs (strace): one per request at most.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, STATE_WRITE_CALLS, stateFsyncsByPullRequest, stateWritesAfter, tracedRun } from './kill-rig.js';

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
    const run = await tracedRun(b, ['pull', '--all'], trace, { calls: STATE_WRITE_CALLS });
    expect(run.code, run.err).toBe(0);
    const summary = JSON.parse(run.out) as { pulledEntries: number; createdSessions: number };
    expect(summary.pulledEntries).toBe(SESSIONS * ENTRIES);
    expect(summary.createdSessions).toBe(SESSIONS);

    // The trace in order: pull requests, and fsyncs of files under this machine's sync state.
    const stateDir = join(b.home, 'sync') + '/';
    const { windows, journal } = stateFsyncsByPullRequest(trace, stateDir);
    const requests = windows.length - 1;
    expect(requests, 'pull requests seen in the trace').toBeGreaterThanOrEqual(3);
    // Between one pull request and the next: at most one durable write (the journal's). After the last request the
    // journal is compacted into the pack: those writes are counted apart, below.
    const between = windows.slice(1, -1);
    expect(Math.max(...between), `fsyncs of client state between pull requests: ${between.join(' ')}`).toBeLessThanOrEqual(1);
    expect(journal).toBeLessThanOrEqual(requests);
    const compaction = windows[windows.length - 1]!;
    // The end of the run, whatever the number of sessions: the pack (its file and its folder), and the maps.
    expect(compaction, 'fsyncs of client state after the last pull request').toBeLessThanOrEqual(3);
    const end = stateWritesAfter(trace, stateDir, /POST \/v1\/(sessions\/[^ ]*\/pull|pulls) /);
    expect(end.creates, 'files of client state created after the last pull request').toBeLessThanOrEqual(2);
    console.log(`${requests} pull requests; fsyncs of client state before the first: ${windows[0]}; between requests: ${between.join(' ')}; after the last: ${compaction} fsyncs, ${end.creates} files made`);

    // And what it pulled is all there, once, and remembered: a second pull has nothing to add.
    const again = (await b.ok(['pull', '--all', '--json'])) as { pulledEntries: number };
    expect(again.pulledEntries).toBe(0);
    for (const id of ids.slice(0, 3)) expect(readLog(b.fileOf(id)).ids).toHaveLength(ENTRIES);
  }, 120_000);
});

describe.skipIf(!hasStrace())('durable state writes of a single-session pull (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-one-writes-');
  /** Five pages of at most 40 one-entry batches, pulled one request after another. */
  const MANY = 200;

  /** Between one pull request and the next: only the journal's one fsync, never a state file of its own. */
  function expectJournaled(trace: string, stateDir: string, what: string): void {
    const { windows, others } = stateFsyncsByPullRequest(trace, stateDir);
    const requests = windows.length - 1;
    expect(requests, `${what}: pull requests seen in the trace`).toBeGreaterThanOrEqual(4);
    const between = windows.slice(1, -1);
    expect(Math.max(...between), `${what}: fsyncs of client state between pull requests: ${between.join(' ')}`).toBeLessThanOrEqual(1);
    expect(others.slice(1, -1), `${what}: state-file fsyncs between pull requests`).toEqual(between.map(() => 0));
    console.log(`${what}: ${requests} pull requests; fsyncs of client state between requests: ${between.join(' ')}; after the last: ${windows[requests]}`);
  }

  it('`resume <id>` of a session only on the server, then `pull <id>` of its appended batches: one journal fsync per request', async () => {
    const remote = 'git@github.com:acme/pull-one-writes.git';
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'b', { remote });
    await a.login(rig.server);
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']); // the host id, before the traced runs
    const id = plantSession(a, 0, MANY);
    await a.ok(['push', '--all', '--json']);
    const stateDir = join(b.home, 'sync') + '/';

    const created = join(rig.root, 'resume.strace');
    const run = await tracedRun(b, ['resume', id], created, { strings: 80 }); // the whole request line: the id is in its path
    expect(run.code, run.err).toBe(0);
    expectJournaled(created, stateDir, 'resume of a remote session');
    expect(readLog(b.fileOf(id)).ids).toHaveLength(MANY);

    plantSession(a, 0, MANY, { from: MANY });
    await a.ok(['push', '--all', '--json']);
    const appended = join(rig.root, 'pull-one.strace');
    const pulled = await tracedRun(b, ['pull', id], appended, { strings: 80 });
    expect(pulled.code, pulled.err).toBe(0);
    expect((JSON.parse(pulled.out) as { pulledEntries: number }).pulledEntries).toBe(MANY);
    expectJournaled(appended, stateDir, 'pull of one session');

    // All of it there once, and remembered: another pull has nothing to add, and no journal is left.
    const got = readLog(b.fileOf(id)).ids;
    expect(new Set(got).size).toBe(2 * MANY);
    expect(((await b.ok(['pull', id, '--json'])) as { pulledEntries: number }).pulledEntries).toBe(0);
    expect(existsSync(join(b.serverState(), 'push-journal.jsonl'))).toBe(false);
  }, 120_000);
});
