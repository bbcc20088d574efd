// kill -9 of push and pull at random points against the Workers runtime (wrangler dev --local): a re-run converges.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, readLog, startWorkerdServer, useServer } from './helpers.js';

const RUNS = 12; // each run kills one push and one pull (machines alternate): 24 kills

type Outcome = 'killed' | 'finished';

/** Starts `sessync <args>` and SIGKILLs it after `delayMs` (or it finishes first). Returns how it ended. */
function runAndKill(m: Machine, args: string[], delayMs: number): Promise<Outcome> {
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

/**
 * Did the killed run leave a batch written down but unacknowledged? Looks for per-session state files
 * (`.../sessions/<id>.json` anywhere under sync/, whichever per-server layout the state uses) with a pending batch.
 */
function pendingLeft(m: Machine): boolean {
  const walk = (d: string): boolean => {
    if (!existsSync(d)) return false;
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) {
        if (walk(p)) return true;
      } else if (d.endsWith('sessions') && n.endsWith('.json')) {
        if ((JSON.parse(readFileSync(p, 'utf8')) as { pending?: unknown }).pending != null) return true;
      }
    }
    return false;
  };
  return walk(join(m.home, 'sync'));
}

function assertNoDuplicates(path: string): void {
  const ids = readLog(path).ids;
  expect(new Set(ids).size, `duplicate entry lines in ${path}`).toBe(ids.length);
}

/**
 * A real HTTP hop in front of workerd that holds each answer back 50-250 ms after the server has acted on the
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
    } catch (e) {
      // The client sees a 502 and retries; say why here so a broken proxy is not mistaken for a sync bug.
      console.error(`proxy: ${req.method} ${req.url} failed: ${String(e)}`);
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', () => ok()));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => srv.close() };
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

      // Both ways to quiescence: the puller's own new entries go up, the pusher takes them down.
      await puller.ok(['push', '--json']);
      await pusher.ok(['pull', '--json']);

      // Converged: no duplicate line anywhere, same sessions, same entry sets, every written entry present, same leaf.
      const aFiles = a.sessionFiles().filter((f) => readLog(f).ids.length > 0);
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
