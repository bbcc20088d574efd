// kill -9 of push and pull at random points against the Workers runtime (wrangler dev --local): a re-run converges.
import { describe, expect, it, onTestFinished } from 'vitest';
import { Machine, entrySet, readLog, startWorkerdServer, useServer } from './helpers.js';
import { pendingLeft, runAndKill, slowProxy } from './kill-rig.js';

const RUNS = 12; // each run kills one push and one pull (machines alternate): 24 kills



function assertNoDuplicates(path: string): void {
  const ids = readLog(path).ids;
  expect(new Set(ids).size, `duplicate entry lines in ${path}`).toBe(ids.length);
}


/** Session id from a session file name (`<time>_<uuid>.jsonl`). */
function sessionOf(file: string): string {
  return String(readLog(file).header.id);
}

describe('kill -9 during push and pull on workerd (wrangler dev --local)', () => {
  const rig = useServer(startWorkerdServer, 'sessync-kill-wd-');

  it(`converges after ${RUNS * 2} random SIGKILLs of push and pull`, async () => {
    expect(rig.server.kind).toBe('workerd');
    // Small batches: a small session becomes several batches, so kills land between them too.
    const env = { SESSYNC_SYNC_BATCH_BYTES: '600' };
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/kill-wd.git', env });
    // The second machine has the same repository at another path under another URL form.
    const b = new Machine(rig.root, 'b', { remote: 'https://github.com/acme/kill-wd', env });
    const proxy = await slowProxy(rig.server.url);
    onTestFinished(() => proxy.close());
    await a.login({ ...rig.server, url: proxy.url });
    await b.login({ ...rig.server, url: proxy.url });

    const sessions = [await a.newSession()];
    const outcomes = { push: { killed: 0, finished: 0 }, pull: { killed: 0, finished: 0 }, pendingAfterKill: 0 };
    // Time of a full run per command, measured on the previous re-run: the kill lands from start-up to past the end.
    const fullRun = { push: 1500, pull: 1500 };
    const written = new Set<string>(); // every entry id ever appended by the test, on either machine
    const noteWritten = (m: Machine) => {
      for (const f of m.sessionFiles()) for (const id of readLog(f).ids) written.add(id);
    };

    for (let run = 0; run < RUNS; run++) {
      // Alternate roles: even runs A pushes and B pulls, odd runs B pushes and A pulls.
      const [pusher, puller] = run % 2 === 0 ? [a, b] : [b, a];
      if (run % 4 === 2) sessions.push(await a.newSession());
      const s = sessions[run % sessions.length]!;
      const n = 2 + Math.floor(Math.random() * 5);
      await a.say(s, ...Array.from({ length: n }, (_, i) => `run ${run} a-entry ${i} ${'x'.repeat(Math.floor(Math.random() * 300))}`));
      // B writes too once it has sessions, so both directions carry new entries (and concurrent branches).
      const bs = b.sessionFiles().map(sessionOf);
      if (bs.length) await b.say(bs[run % bs.length]!, `run ${run} b-entry ${'z'.repeat(Math.floor(Math.random() * 200))}`);
      noteWritten(a);
      noteWritten(b);

      // kill -9 of a push at a random point, then the same push to completion.
      outcomes.push[await runAndKill(pusher, ['push'], fullRun.push * (0.2 + Math.random() * 1.0))]++;
      if (pendingLeft(pusher)) outcomes.pendingAfterKill++;
      let t = Date.now();
      await pusher.ok(['push', '--json']);
      fullRun.push = Math.max(400, Date.now() - t);

      // kill -9 of a pull on the other machine, then the same pull to completion.
      outcomes.pull[await runAndKill(puller, ['pull'], fullRun.pull * (0.2 + Math.random() * 1.0))]++;
      t = Date.now();
      await puller.ok(['pull', '--json']);
      fullRun.pull = Math.max(400, Date.now() - t);

      // Both ways to quiescence: the puller's own new entries go up, the pusher takes them down. A pull that puts
      // the other machine's entries after a newer local tip adds a checkout marker (so pi's last-line leaf is
      // sessync's leaf): the pusher's marker, if any, goes up and down once more.
      await puller.ok(['push', '--json']);
      await pusher.ok(['pull', '--json']);
      await pusher.ok(['push', '--json']);
      await puller.ok(['pull', '--json']);

      // Converged: no duplicate line anywhere, same sessions (a header-only one travels too), same entry sets,
      // every written entry present, same leaf.
      const aFiles = a.sessionFiles();
      const bFiles = b.sessionFiles();
      expect(bFiles.map(sessionOf).sort(), `sessions after run ${run}`).toEqual(aFiles.map(sessionOf).sort());
      const onBoth = new Set<string>();
      for (const f of bFiles) {
        assertNoDuplicates(f);
        const id = sessionOf(f);
        const af = a.fileOf(id);
        assertNoDuplicates(af);
        const bSet = entrySet(f);
        expect(bSet, `session ${id} differs after run ${run}`).toEqual(entrySet(af));
        for (const e of bSet.keys()) onBoth.add(e);
      }
      for (const e of written) expect(onBoth.has(e), `entry ${e} lost after run ${run}`).toBe(true);
    }

    // Both machines compute the same active leaf and context for every session.
    for (const id of b.sessionFiles().map(sessionOf)) {
      const [ta, tb] = [await a.ok(['tree', id, '--json']), await b.ok(['tree', id, '--json'])];
      expect(ta.leafId, `leaf of ${id}`).toBeTruthy();
      expect(tb.leafId, `leaf of ${id}`).toBe(ta.leafId);
    }
    // Nothing left to do on either side.
    const qa = await a.ok(['sync', '--json']);
    const qb = await b.ok(['sync', '--json']);
    expect(qa).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
    expect(qb).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });

    expect(written.size).toBeGreaterThan(RUNS * 3);
    // Enough processes really died mid-run for the test to mean something, in both directions.
    expect(outcomes.push.killed + outcomes.pull.killed).toBeGreaterThanOrEqual(RUNS);
    expect(outcomes.push.killed).toBeGreaterThan(0);
    expect(outcomes.pull.killed).toBeGreaterThan(0);
    console.log(
      `workerd kill -9: push ${outcomes.push.killed} killed / ${outcomes.push.finished} finished first, pull ${outcomes.pull.killed} killed / ${outcomes.pull.finished} finished first; ` +
        `${outcomes.pendingAfterKill} kills left a batch sent but not acknowledged; ${written.size} entries converged`,
    );
  }, 240_000);
});
