// kill -9 at random points of push and pull, then a re-run: converges, nothing duplicated, nothing lost (>= 20 runs).
import { describe, expect, it, onTestFinished } from 'vitest';
import { Machine, entrySet, readLog, startNodeServer, useServer } from './helpers.js';
import { pendingLeft, runAndKill, slowProxy } from './kill-rig.js';

const RUNS = 10; // each run kills one sync (push then pull) on each machine: 20 kills



function assertNoDuplicates(path: string): void {
  const ids = readLog(path).ids;
  expect(new Set(ids).size, `duplicate entry lines in ${path}`).toBe(ids.length);
}


describe('kill -9 during push and pull', () => {
  const rig = useServer(startNodeServer, 'sessync-kill-');

  it(`converges after ${RUNS * 2} random SIGKILLs`, async () => {
    // Small batches: a small session becomes several batches, so kills land between them too.
    const env = { SESSYNC_SYNC_BATCH_BYTES: '600' };
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/kill.git', env });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/kill.git', env });
    const proxy = await slowProxy(rig.server.url);
    onTestFinished(() => proxy.close());
    await a.login({ ...rig.server, url: proxy.url });
    await b.login({ ...rig.server, url: proxy.url });
    const sessions = [await a.newSession()];
    let expected = new Map<string, Set<string>>();
    const outcomes = { killed: 0, finished: 0, pendingAfterKill: 0 };
    const fullRun = { a: 1500, b: 1500 };
    for (let run = 0; run < RUNS; run++) {
      if (run % 4 === 1) sessions.push(await a.newSession());
      const s = sessions[run % sessions.length]!;
      const n = 2 + Math.floor(Math.random() * 5);
      await a.say(s, ...Array.from({ length: n }, (_, i) => `run ${run} entry ${i} ${'x'.repeat(Math.floor(Math.random() * 300))}`));
      // B writes too (once it has the session), so A's pulls have something to merge.
      if (run > 0) {
        const bs = b.sessionFiles().map((f) => f.slice(-42, -6));
        if (bs.length) await b.say(bs[run % bs.length]!, `b says ${run}`);
      }

      // The kill lands anywhere from start-up to the end of a full run (timed on the previous run of that machine).
      outcomes[await runAndKill(a, ['sync'], fullRun.a * (0.3 + Math.random() * 0.9))]++;
      if (pendingLeft(a)) outcomes.pendingAfterKill++;
      outcomes[await runAndKill(b, ['sync'], fullRun.b * (0.3 + Math.random() * 0.9))]++;
      if (pendingLeft(b)) outcomes.pendingAfterKill++;
      // Re-runs to completion: A pushes what it missed, B pulls and pushes, A pulls B's.
      let t = Date.now();
      await a.ok(['sync', '--json']);
      fullRun.a = Math.max(400, Date.now() - t);
      t = Date.now();
      await b.ok(['sync', '--json']);
      fullRun.b = Math.max(400, Date.now() - t);
      await a.ok(['sync', '--json']);
      // A checkout marker that A's last pull needed (B's entries landed after a newer tip of A's, and pi takes
      // the last line as its leaf) went up in that run: B takes it down.
      await b.ok(['sync', '--json']);

      expected = new Map();
      for (const f of a.sessionFiles()) {
        assertNoDuplicates(f);
        expected.set(String(readLog(f).header.id), new Set(readLog(f).ids));
      }
      for (const f of b.sessionFiles()) {
        assertNoDuplicates(f);
        const id = String(readLog(f).header.id);
        expect(entrySet(f), `session ${id} differs after run ${run}`).toEqual(entrySet(a.fileOf(id)));
      }
      // Every session reaches B, one with no entry yet too (announced by an empty first batch).
      expect(b.sessionFiles()).toHaveLength(a.sessionFiles().length);
    }
    // Every entry ever written is on both machines (nothing lost): count them.
    const total = [...expected.values()].reduce((n, s) => n + s.size, 0);
    expect(total).toBeGreaterThan(RUNS * 2);
    // Both processes were killed often enough for the test to mean something.
    expect(outcomes.killed).toBeGreaterThanOrEqual(RUNS);
    console.log(`kill -9 runs: ${outcomes.killed} killed mid-run (${outcomes.pendingAfterKill} with a batch sent but not acknowledged), ${outcomes.finished} finished before the kill; ${total} entries converged`);
  }, 300_000);
});
