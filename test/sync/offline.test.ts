// With the server away, local answers come at once, a refused connection fails within about a second, and retries say what they wait for.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { Machine, freePort } from './helpers.js';
import { until } from './kill-rig.js';

/** Generous against today's ~10 s of retries, and far above the ~1 s a refused connection should take. */
const FAST_MS = 5_000;

function loginTo(m: Machine, url: string): void {
  // `sessync login` itself needs the server; the saved login is what every later command reads.
  writeFileSync(join(m.home, 'login.json'), JSON.stringify({ url, token: 'sst_offline-test', account: 'acct-offline' }));
}

async function timed(m: Machine, args: string[]) {
  const t0 = Date.now();
  const r = await m.run(args, { timeoutMs: 60_000 });
  return { ...r, ms: Date.now() - t0 };
}

/** Runs a command and resolves once `ready` matches its output, while the process is still waiting; then kills it. */
function outputWhileWaiting(m: Machine, args: string[], ready: RegExp): Promise<{ stdout: string; stderr: string; stillRunning: boolean }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args, '--cwd', m.project], { cwd: REPO_ROOT, env: { ...process.env, ...m.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.once('exit', () => (exited = true));
  child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
  return until(`${args.join(' ')} to print ${ready}`, 20_000, async () => (ready.test(stdout + stderr) || exited ? true : undefined), 50).then(() => {
    const stillRunning = !exited;
    child.kill('SIGKILL');
    return { stdout, stderr, stillRunning };
  });
}

describe('offline: a closed port', () => {
  let root: { dir: string; cleanup(): void };
  let m: Machine;
  let id: string;
  beforeAll(async () => {
    root = tempDir('sessync-offline-');
    m = new Machine(root.dir, 'm');
    id = await m.newSession();
    await m.say(id, 'written offline', 'and again');
    loginTo(m, `http://127.0.0.1:${await freePort()}`); // nothing listens there
  });
  afterAll(() => root.cleanup());

  it('status prints the local figures, says the server is not reachable, exits 0, fast', async () => {
    const r = await timed(m, ['status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^here: 1 session\\(s\\), 1 to push\\n  ${id}  2 to push, not on the server yet\\n`));
    expect(r.stdout).toMatch(/server: http:\/\/127\.0\.0\.1:\d+: not checked \(cannot reach the sessync server .*ECONNREFUSED/);
    expect(r.ms).toBeLessThan(FAST_MS);
    const j = await timed(m, ['status', '--json']);
    expect(j.code).toBe(0);
    expect(j.json()).toMatchObject({ serverError: { code: 'unavailable' }, sessions: [{ session: id, unpushedEntries: 2, waitingBatches: null }] });
    expect(j.ms).toBeLessThan(FAST_MS);
  });

  it('sync fails fast, retryable, with the local figures and the retries it made on stderr', async () => {
    const r = await timed(m, ['sync']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/ECONNREFUSED.*Nothing was synced; here 1 session\(s\), 1 with entries to push/);
    // Each retry says what it waits for; a refused connection gets only the few that fit in about a second.
    const retries = r.stderr.split('\n').filter((l) => /waiting [\d.]+ s for retry \d+ \(nothing answers; giving up after 1 s\)/.test(l));
    expect(retries.length).toBeLessThanOrEqual(4);
    expect(r.ms).toBeLessThan(FAST_MS);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    const j = await timed(m, ['sync', '--json']);
    expect(j.stdout).toBe(''); // retry notes never reach --json stdout
    // With --json, stderr is JSON lines: what it waited for, then the error.
    const docs = j.stderr.trim().split('\n').map((l) => JSON.parse(l));
    expect(docs.at(-1).error).toMatchObject({ code: 'unavailable', retryable: true });
    expect(docs.length).toBeGreaterThanOrEqual(2);
    for (const d of docs.slice(0, -1)) expect(d.waiting).toMatchObject({ code: 'unavailable', attempt: expect.any(Number), waitMs: expect.any(Number), unreachableMs: 1000, message: expect.stringMatching(/ECONNREFUSED.*waiting/) });
    expect(j.ms).toBeLessThan(FAST_MS);
  });

  it('push fails fast too', async () => {
    const r = await timed(m, ['push', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr.trim().split('\n').at(-1)!).error).toMatchObject({ code: 'unavailable', retryable: true });
    expect(r.ms).toBeLessThan(FAST_MS);
  });

  it('resume of an id that is not here says so at once and fails fast', async () => {
    const r = await timed(m, ['resume', 'ffff0000']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^"ffff0000" is not on this machine; looking on the server\n/);
    expect(r.stderr).toMatch(/sessync: no session matches "ffff0000" on this machine, and the server could not be asked: cannot reach .*ECONNREFUSED/);
    expect(r.ms).toBeLessThan(FAST_MS);
    // A session that is here never touches the network.
    const here = await timed(m, ['resume', id.slice(-8)]);
    expect(here.code, here.stderr).toBe(0);
  });

  it('share fails fast after printing what redaction found', async () => {
    const r = await timed(m, ['share', id.slice(-8)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^redacted: nothing\nuploading to http:\/\/127\.0\.0\.1:\d+\n/);
    expect(r.stderr).toMatch(/sessync: cannot reach the sessync server .*ECONNREFUSED/);
    expect(r.ms).toBeLessThan(FAST_MS);
  });
});

describe('offline: a server that takes the connection and never answers', () => {
  let root: { dir: string; cleanup(): void };
  let m: Machine;
  let id: string;
  let server: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    root = tempDir('sessync-offline-hang-');
    m = new Machine(root.dir, 'm');
    id = await m.newSession();
    await m.say(id, 'one');
    server = createServer((s) => sockets.push(s)); // accepts, reads nothing, answers nothing
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    loginTo(m, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    root.cleanup();
  });

  it('status has printed its local figures while it still waits for the server', async () => {
    const r = await outputWhileWaiting(m, ['status'], /here: 1 session\(s\)/);
    expect(r.stillRunning).toBe(true);
    expect(r.stdout).toBe(`here: 1 session(s), 1 to push\n  ${id}  1 to push, not on the server yet\n`);
  });

  it('share has printed the redaction summary and where it uploads while it waits', async () => {
    const r = await outputWhileWaiting(m, ['share', id.slice(-8)], /uploading to/);
    expect(r.stillRunning).toBe(true);
    expect(r.stderr).toMatch(/^redacted: nothing\nuploading to http:\/\/127\.0\.0\.1:\d+\n$/);
  });
});
