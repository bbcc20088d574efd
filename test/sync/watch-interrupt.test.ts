// `sync --watch` stopped by Ctrl-C or SIGTERM, real signals to the real CLI: the round under way stops before its next
// request with its state saved, and the watcher exits 130 / 143 with the error `interrupted`, as push, pull and sync do.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, plantSession, readLog, useServer } from './helpers.js';
import { errorOf, headKey, storedIds, until } from './kill-rig.js';

type WatchEvent = { event: string; message: string };

/** `sync --watch --json` on m; `stop` decides when and how it is signalled. Returns its exit and output. */
async function watch(m: Machine, env: Record<string, string>, stop: (events: WatchEvent[], kill: (s: NodeJS.Signals) => void) => Promise<void>) {
  const child = spawn(process.execPath, [CLI_BIN, 'sync', '--watch', '--all', '--json', '--cwd', m.project], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...m.env, SESSYNC_WATCH_PULL_MS: '300', SESSYNC_WATCH_PUSH_MS: '100', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: WatchEvent[] = [];
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  createInterface({ input: child.stdout! }).on('line', (l) => events.push(JSON.parse(l)));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.once('exit', (code, sig) => r([code, sig])));
  try {
    await stop(events, (s) => child.kill(s));
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  const [code, signal] = await exited;
  return { code, signal, events, err };
}


describe('sync --watch stopped by a signal', () => {
  const rig = useServer(undefined, 'sessync-watch-interrupt-');

  it('SIGINT in the middle of a round (a pull of 20 sessions): exit 130, interrupted, state saved; a sync finishes it, nothing doubled', async () => {
    const remote = 'git@github.com:acme/watch-interrupt.git';
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'b', { remote });
    for (const m of [a, b]) await m.login(rig.server);
    const ids = Array.from({ length: 20 }, (_, n) => plantSession(a, n, 90)); // three pages a session
    await a.ok(['push', '--all', '--json']);
    const before = await headKey(rig.server);
    // The watcher signals itself at the third page merged of its first round: more requests of that round follow.
    const r = await watch(b, { SESSYNC_KILL_POINT: 'pull-merged:3', SESSYNC_KILL_SIGNAL: 'SIGINT' }, async () => undefined);
    expect([r.code, r.signal], r.err).toEqual([130, null]);
    const e = errorOf(r.err);
    expect(e.code).toBe('interrupted');
    expect(e.message).toContain('SIGINT');
    expect(r.events.at(-1)?.event, 'the watcher says it stopped').toBe('stop');
    expect(r.events.filter((x) => x.event === 'error' || x.event === 'offline'), 'the stop is not reported as a failure').toEqual([]);
    // Stopped between requests, its states written out: no journal left for the next run to replay.
    expect(existsSync(join(b.serverState(), 'push-journal.jsonl')), 'a journal left behind').toBe(false);
    expect(b.sessionFiles().length, 'some sessions pulled').toBeGreaterThan(0);
    const s = (await b.ok(['sync', '--all', '--json'])) as { failed: number; pushedEntries: number; pulledEntries: number };
    expect([s.failed, s.pushedEntries]).toEqual([0, 0]);
    expect(s.pulledEntries, 'the round was cut short: the sync after it pulls the rest').toBeGreaterThan(0);
    expect(await headKey(rig.server), 'the server gained no batch').toEqual(before);
    for (const id of ids) expect([...readLog(b.fileOf(id)).ids].sort(), `session ${id}`).toEqual((await storedIds(rig.server, id)).sort());
  }, 120_000);

  it('SIGTERM between rounds: exit 143 with interrupted', async () => {
    const c = new Machine(rig.root, 'c', { remote: 'git@github.com:acme/watch-interrupt-term.git' });
    await c.login(rig.server);
    const r = await watch(c, {}, async (events, kill) => {
      await until('the watcher to start', 20_000, async () => events.some((x) => x.event === 'start'));
      await new Promise((res) => setTimeout(res, 700)); // a few rounds
      kill('SIGTERM');
    });
    expect([r.code, r.signal], r.err).toEqual([143, null]);
    expect(errorOf(r.err).code).toBe('interrupted');
    expect(errorOf(r.err).message).toContain('SIGTERM');
    // A watcher has nothing left to finish: not told to run again, and not retryable.
    expect(errorOf(r.err).message).toContain('sync --watch stopped');
    expect(errorOf(r.err).retryable).toBe(false);
    expect(r.events.at(-1)?.event).toBe('stop');
  }, 60_000);
});
