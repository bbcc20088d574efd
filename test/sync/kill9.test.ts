// kill -9 at random points of push and pull, then a re-run: converges, nothing duplicated, nothing lost (>= 20 runs).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, readLog, startNodeServer, useServer, type TestServer } from './helpers.js';

const RUNS = 10; // each run kills one sync (push then pull) on each machine: 20 kills

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

/** Did the killed run leave a batch written down but unacknowledged (the resend-the-same-batch path)? */
function pendingLeft(m: Machine): boolean {
  const dir = join(m.serverState(), 'sessions');
  if (!existsSync(dir)) return false;
  return readdirSync(dir).some((n) => n.endsWith('.json') && (JSON.parse(readFileSync(join(dir, n), 'utf8')) as { pending: unknown }).pending !== null);
}

function assertNoDuplicates(path: string): void {
  const ids = readLog(path).ids;
  expect(new Set(ids).size, `duplicate entry lines in ${path}`).toBe(ids.length);
}

/**
 * A real HTTP hop in front of the server that holds each answer back 50-250 ms after the server has acted on the
 * request: widens the window where a batch is stored but its acknowledgement not yet recorded, so kills land there.
 */
async function slowProxy(target: string): Promise<{ url: string; close(): void }> {
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      const r = await fetch(target + req.url, {
        method: req.method!,
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length')) as Record<string, string>,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = Buffer.from(await r.arrayBuffer());
      await new Promise((ok) => setTimeout(ok, 50 + Math.random() * 200));
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
      res.end(body);
    } catch {
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', () => ok()));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => srv.close() };
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
      // A session with no entry yet has nothing to push (a batch holds at least one entry): it is not expected on B.
      expect(b.sessionFiles()).toHaveLength(a.sessionFiles().filter((f) => readLog(f).ids.length > 0).length);
    }
    // Every entry ever written is on both machines (nothing lost): count them.
    const total = [...expected.values()].reduce((n, s) => n + s.size, 0);
    expect(total).toBeGreaterThan(RUNS * 2);
    // Both processes were killed often enough for the test to mean something.
    expect(outcomes.killed).toBeGreaterThanOrEqual(RUNS);
    console.log(`kill -9 runs: ${outcomes.killed} killed mid-run (${outcomes.pendingAfterKill} with a batch sent but not acknowledged), ${outcomes.finished} finished before the kill; ${total} entries converged`);
  }, 300_000);
});
