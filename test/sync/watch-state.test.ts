// `sync --watch` keeps its state where sync/push/pull/status do: one folder per server and account, no re-push on a switch.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, startNodeServer, useServer, type TestServer } from './helpers.js';
import { heads, until } from './kill-rig.js';

type WatchEvent = { event: string; message: string; pushedEntries?: number };

/** Runs `sync --watch --json` on machine m until `done` resolves, then SIGTERM; returns its events and stderr. */
async function watchWhile(m: Machine, done: (events: WatchEvent[]) => Promise<void>): Promise<{ events: WatchEvent[]; code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BIN, 'sync', '--watch', '--json', '--cwd', m.project], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...m.env, SESSYNC_WATCH_PULL_MS: '500', SESSYNC_WATCH_PUSH_MS: '200' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: WatchEvent[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout! }).on('line', (l) => events.push(JSON.parse(l)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    await until('the watcher to start', 20_000, async () => events.some((e) => e.event === 'start'));
    await done(events);
  } finally {
    child.kill('SIGTERM');
  }
  return { events, code: await exited, stderr };
}

async function ownSeq(server: TestServer, session: string): Promise<number> {
  return (await heads(server)).filter((h) => h.session === session).reduce((n, h) => Math.max(n, h.seq), 0);
}

describe('sync --watch and sync share their state', () => {
  const rig = useServer(undefined, 'sessync-watch-state-');

  it('one state folder per server and account; switching between sync and sync --watch pushes nothing twice', async () => {
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/watch-state.git' });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    expect((await a.ok(['sync', '--json'])).pushedEntries).toBe(2);
    const seqAfterSync = await ownSeq(rig.server, id);

    // The watcher starts from what sync left: nothing to push, so its first cycles move nothing.
    const w = await watchWhile(a, async (events) => {
      await new Promise((r) => setTimeout(r, 1_500)); // several push and pull cycles of the watcher
      expect(events.filter((e) => e.event === 'synced')).toEqual([]);
      await a.say(id, 'three');
      await until('the watched append on the server', 20_000, async () => (await ownSeq(rig.server, id)) > seqAfterSync);
    });
    expect(w.code, 'SIGTERM ends a watcher with 143').toBe(143);
    const synced = w.events.filter((e) => e.event === 'synced');
    expect(synced.reduce((n, e) => n + (e.pushedEntries ?? 0), 0)).toBe(1);
    expect(w.events.filter((e) => e.event === 'note' || e.event === 'session-error')).toEqual([]); // no "seq refused" notes
    expect(await ownSeq(rig.server, id)).toBe(seqAfterSync + 1);

    // One folder for this server and account, used by both.
    expect(readdirSync(join(a.home, 'sync', 'servers'))).toHaveLength(1);
    // Back to sync and status: what the watcher pushed is not pushed again.
    const status = await a.ok(['status', '--json']);
    expect(status.sessions).toEqual([expect.objectContaining({ session: id, unpushedEntries: 0, pendingBatch: false, waitingBatches: 0 })]);
    const again = await a.ok(['sync', '--json']);
    expect(again.pushedEntries).toBe(0);
    expect(await ownSeq(rig.server, id)).toBe(seqAfterSync + 1);

    // And the other way: sync pushes, then a new watcher has nothing to push.
    await a.say(id, 'four');
    expect((await a.ok(['push', '--json'])).pushedEntries).toBe(1);
    const w2 = await watchWhile(a, async () => {
      await new Promise((r) => setTimeout(r, 1_500));
    });
    expect(w2.events.filter((e) => e.event === 'synced')).toEqual([]);
    expect(readdirSync(join(a.home, 'sync', 'servers'))).toHaveLength(1);
    expect(await ownSeq(rig.server, id)).toBe(seqAfterSync + 2);

    // Another server: its own folder, where the watcher pushes everything once; back home nothing moves again.
    const other = await startNodeServer();
    try {
      await a.login(other);
      const w3 = await watchWhile(a, async () => {
        await until('the whole session on the other server', 20_000, async () => (await ownSeq(other, id)) > 0);
      });
      expect(w3.events.filter((e) => e.event === 'synced').reduce((n, e) => n + (e.pushedEntries ?? 0), 0)).toBe(4);
      expect(readdirSync(join(a.home, 'sync', 'servers'))).toHaveLength(2);
      await a.login(rig.server);
      expect((await a.ok(['sync', '--json'])).pushedEntries).toBe(0);
      expect(readdirSync(join(a.home, 'sync', 'servers'))).toHaveLength(2);
    } finally {
      await other.stop();
      other.cleanup();
    }
  }, 120_000);
});
