// kill -9 at random points of push and pull, then a re-run: converges, nothing duplicated, nothing lost (>= 20 runs).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, readLog, startNodeServer, tempDir, type TestServer } from './helpers.js';

const RUNS = 12; // each run kills one push and one pull: 24 kills

/** Starts `sessync <args>` and SIGKILLs it after `delayMs` (or lets it finish first). Returns how it ended. */
function runAndKill(m: Machine, args: string[], delayMs: number): Promise<'killed' | 'finished'> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args, '--cwd', m.project, '--json'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...m.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    const t = setTimeout(() => child.kill('SIGKILL'), delayMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(t);
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('finished');
      else reject(new Error(`sessync ${args.join(' ')} exited ${code}: ${err}`));
    });
  });
}

function assertNoDuplicates(path: string): void {
  const ids = readLog(path).ids;
  expect(new Set(ids).size, `duplicate entry lines in ${path}`).toBe(ids.length);
}

describe('kill -9 during push and pull', () => {
  let server: TestServer & { cleanup(): void };
  let root: { dir: string; cleanup(): void };
  beforeAll(async () => {
    server = await startNodeServer();
    root = tempDir('sessync-kill-');
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    server?.cleanup();
    root?.cleanup();
  });

  it(`converges after ${RUNS * 2} random SIGKILLs`, async () => {
    // Small batches: a small session becomes several batches, so kills land between them too.
    const env = { SESSYNC_SYNC_BATCH_BYTES: '600' };
    const a = new Machine(root.dir, 'a', { remote: 'git@github.com:acme/kill.git', env });
    const b = new Machine(root.dir, 'b', { remote: 'git@github.com:acme/kill.git', env });
    await a.login(server);
    await b.login(server);
    const sessions = [await a.newSession()];
    let expected = new Map<string, Set<string>>();
    const outcomes = { killed: 0, finished: 0 };
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

      outcomes[await runAndKill(a, ['sync'], Math.random() * 1500)]++;
      outcomes[await runAndKill(b, ['sync'], Math.random() * 1500)]++;
      // Re-runs to completion: A pushes what it missed, B pulls and pushes, A pulls B's.
      await a.ok(['sync', '--json']);
      await b.ok(['sync', '--json']);
      await a.ok(['sync', '--json']);

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
      expect(b.sessionFiles()).toHaveLength(a.sessionFiles().length);
    }
    // Every entry ever written is on both machines (nothing lost): count them.
    const total = [...expected.values()].reduce((n, s) => n + s.size, 0);
    expect(total).toBeGreaterThan(RUNS * 2);
    // Both processes were killed often enough for the test to mean something.
    expect(outcomes.killed).toBeGreaterThanOrEqual(RUNS);
    console.log(`kill -9 runs: ${outcomes.killed} killed mid-run, ${outcomes.finished} finished before the kill; ${total} entries converged`);
  }, 300_000);
});
