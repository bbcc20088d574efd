// Ctrl-C (SIGINT) or SIGTERM during `sessync sync` / `push`, real signals to the real CLI: it stops between requests
// with its state saved, exits 130 / 143 with the error `interrupted`, and the same command afterwards finishes the
// job with nothing lost and nothing doubled.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { errorOf, headKey, storedIds } from './kill-rig.js';

/**
 * `sessync <args> --json` that sends itself `signal` (a real signal, through process.kill) the n-th time it passes
 * the kill point `point` ($SESSYNC_KILL_SIGNAL): the moment lands at the same step every time, not after a delay.
 */
function runSignalled(m: Machine, args: string[], point: string, signal: NodeJS.Signals, times = 1): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args, '--json', '--cwd', m.project], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...m.env, SESSYNC_KILL_POINT: point, SESSYNC_KILL_SIGNAL: signal, SESSYNC_KILL_SIGNAL_TIMES: String(times) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig, out, err })));
}


describe('a sync stopped by Ctrl-C or SIGTERM', () => {
  const rig = useServer(startNodeServer, 'sessync-sync-interrupt-');

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s during a pull of 20 sessions: exit %i, error interrupted, state saved; sync again finishes it, nothing pushed back or doubled', async (signal, exit) => {
    const remote = `git@github.com:acme/sync-interrupt-${signal}.git`;
    const a = new Machine(rig.root, `a-${signal}`, { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, `b-${signal}`, { remote });
    for (const m of [a, b]) await m.login(rig.server);
    const base = signal === 'SIGINT' ? 0 : 100; // each case its own sessions (one server)
    const ids = Array.from({ length: 20 }, (_, n) => plantSession(a, base + n, 90)); // three pages a session
    await a.ok(['push', '--all', '--json']);
    const before = await headKey(rig.server);
    // The signal at the third page merged: the first request's pages are still being written, more requests follow.
    const r = await runSignalled(b, ['sync', '--all'], 'pull-merged:3', signal);
    expect([r.code, r.signal], r.err).toEqual([exit, null]);
    const e = errorOf(r.err);
    expect(e.code).toBe('interrupted');
    expect(e.retryable).toBe(true);
    expect(e.message).toContain(signal);
    expect(e.message).toMatch(/nothing was lost.*again/);
    // Stopped between requests with its states written out: no journal left for the next run to replay.
    expect(existsSync(join(b.serverState(), 'push-journal.jsonl')), 'a journal left behind').toBe(false);
    const got = b.sessionFiles().length;
    expect(got, 'some sessions pulled, not all').toBeGreaterThan(0);
    // The same command finishes: every entry once, none pushed back as b's.
    const s = (await b.ok(['sync', '--all', '--json'])) as { failed: number; pushedEntries: number };
    expect([s.failed, s.pushedEntries]).toEqual([0, 0]);
    expect(await headKey(rig.server), 'the server gained no batch').toEqual(before);
    for (const id of ids) expect([...readLog(b.fileOf(id)).ids].sort(), `session ${id}`).toEqual((await storedIds(rig.server, id)).sort());
  }, 120_000);

  it('SIGINT during a push of many sessions: exit 130; push again sends the rest, each batch stored once', async () => {
    const remote = 'git@github.com:acme/push-interrupt.git';
    const a = new Machine(rig.root, 'push-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const c = new Machine(rig.root, 'push-c', { remote });
    for (const m of [a, c]) await m.login(rig.server);
    const ids = Array.from({ length: 20 }, (_, n) => plantSession(a, 300 + n, 90));
    // After the second journal flush before a request (one request has gone out): more requests follow.
    const r = await runSignalled(a, ['push', '--all'], 'journal-synced:2', 'SIGINT');
    expect([r.code, r.signal], r.err).toEqual([130, null]);
    expect(errorOf(r.err).code).toBe('interrupted');
    const p = (await a.ok(['push', '--all', '--json'])) as { failed: number };
    expect(p.failed).toBe(0);
    await c.ok(['pull', '--all', '--json']);
    for (const id of ids) {
      const stored = await storedIds(rig.server, id);
      expect(new Set(stored).size, `session ${id}: an entry stored twice`).toBe(stored.length);
      expect([...stored].sort(), `session ${id}: every entry on the server`).toEqual([...readLog(a.fileOf(id)).ids].sort());
      expect([...readLog(c.fileOf(id)).ids].sort(), `session ${id} on another machine`).toEqual([...stored].sort());
    }
  }, 120_000);
  it('a double Ctrl-C during a push: exit 130 at once with a line that says so; push again sends every entry once', async () => {
    const remote = 'git@github.com:acme/push-double-interrupt.git';
    const a = new Machine(rig.root, 'push2-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    await a.login(rig.server);
    const ids = Array.from({ length: 10 }, (_, n) => plantSession(a, 400 + n, 90));
    const r = await runSignalled(a, ['push', '--all'], 'journal-synced:2', 'SIGINT', 2);
    expect([r.code, r.signal], r.err).toEqual([130, null]);
    // Not an empty screen: the second signal says what it did and what to do.
    expect(r.err).toMatch(/SIGINT again: stopped at once.*nothing is lost.*same command again/);
    const p = (await a.ok(['push', '--all', '--json'])) as { failed: number };
    expect(p.failed).toBe(0);
    for (const id of ids) {
      const stored = await storedIds(rig.server, id);
      expect(new Set(stored).size, `session ${id}: an entry stored twice`).toBe(stored.length);
      expect([...stored].sort(), `session ${id}: every entry on the server`).toEqual([...readLog(a.fileOf(id)).ids].sort());
    }
  }, 120_000);
});
