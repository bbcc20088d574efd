// The server restarted in the middle of a sync (it completes on retry), and `sync --watch` across an outage.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, pairWithSession, readLog, startNodeServer, useServer } from './helpers.js';
import { heads, until } from './kill-rig.js';

describe('server restarts', () => {
  const rig = useServer(startNodeServer, 'sessync-restart-');

  it('a sync interrupted by a server restart completes on retry, with nothing lost or doubled', async () => {
    const env = { SESSYNC_SYNC_BATCH_BYTES: '1500' };
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/restart.git', env });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/restart.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    const lines = Array.from({ length: 150 }, (_, i) => `entry ${i} ${'y'.repeat(400)}`);
    await a.say(id, ...lines);

    const child = spawn(process.execPath, [CLI_BIN, 'sync', '--cwd', a.project], { cwd: REPO_ROOT, env: { ...process.env, ...a.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // Restart as soon as some batches, not all, are stored.
    const seqAtRestart = await until('a few batches on the server', 60_000, async () => {
      const h = (await heads(rig.server)).find((x) => x.session === id);
      return h && h.seq >= 2 ? h.seq : undefined;
    });
    await rig.server.restart();
    expect(await exited).toBe(0);
    expect(out).toMatch(/pushed 150 entries/); // the one summary line
    expect(err).toMatch(/cannot reach the sessync server.*retry 1/); // the retries are shown to a human
    const final = (await heads(rig.server)).find((x) => x.session === id)!;
    expect(final.seq).toBeGreaterThan(seqAtRestart);

    await b.ok(['pull', '--json']);
    expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    expect(readLog(b.fileOf(id)).ids).toHaveLength(150);
  }, 180_000);

  it('sync --watch pushes an append within seconds, pulls remote entries, rides out an outage, stops on SIGTERM', async () => {
    const R = 'git@github.com:acme/watch.git';
    const { a, b, id } = await pairWithSession(rig.root, ['wa', 'wb'], [R, R], rig.server, 'before watch');

    const child: ChildProcess = spawn(process.execPath, [CLI_BIN, 'sync', '--watch', '--json', '--cwd', a.project], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...a.env, SESSYNC_WATCH_PULL_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const events: { event: string; message: string }[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => events.push(JSON.parse(l)));
    const exited = new Promise<{ code: number | null }>((r) => child.once('exit', (code) => r({ code })));
    try {
      await until('the first push', 30_000, async () => (await heads(rig.server)).some((h) => h.session === id));

      // An append is on the server shortly after it returns.
      await a.say(id, 'appended while watching');
      const t0 = Date.now();
      await until('the watched append on the server', 10_000, async () => (await heads(rig.server)).some((h) => h.session === id && h.seq >= 2));
      console.log(`watch: append reached the server ${Date.now() - t0} ms after the append command returned`);

      // Another machine's entry comes down without asking.
      await b.ok(['pull', '--json']);
      await b.say(id, 'from the other machine');
      await b.ok(['push', '--json']);
      await until('the remote entry in the watched file', 20_000, async () => readLog(a.fileOf(id)).entries.some((e) => (e.message as { content?: string })?.content === 'from the other machine'));

      // Outage: the watcher says so, keeps going, and catches up when the server is back.
      await rig.server.stop();
      await until('an offline event', 20_000, async () => events.some((e) => e.event === 'offline'));
      await a.say(id, 'written while the server was away');
      await rig.server.restart();
      await until('an online event', 30_000, async () => events.some((e) => e.event === 'online'));
      await until('the entry written during the outage on the server', 20_000, async () => (await heads(rig.server)).some((h) => h.session === id && h.seq >= 3));
    } finally {
      child.kill('SIGTERM');
    }
    expect((await exited).code, 'SIGTERM ends a watcher with 143, as it does a sync').toBe(143);
    expect(events.at(-1)?.event).toBe('stop');
    await b.ok(['pull', '--json']);
    expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    expect(readLog(b.fileOf(id)).ids).toHaveLength(4);
  }, 180_000);
});
