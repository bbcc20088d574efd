// kill -9 of the server in the middle of multi-session pushes (POST /v1/batches), then the client's retries: nothing lost, nothing doubled.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, readLog, startNodeServer, useServer } from './helpers.js';
import { heads, storedIds, until } from './kill-rig.js';

const SESSIONS = 10;
const ENTRIES = 40;
const KILLS = 3;

describe('kill -9 of the server during multi-session pushes', () => {
  const rig = useServer(startNodeServer, 'sessync-kill-multi-');

  it(`a push of ${SESSIONS} sessions survives ${KILLS} server kills mid-request: every entry stored once, the other machine gets them all`, async () => {
    // Small batches: each session is several batches, so requests carry many sessions' batches for a while.
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/kill-multi.git', env: { SESSYNC_SYNC_BATCH_BYTES: '1500' } });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/kill-multi.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    const ids: string[] = [];
    for (let s = 0; s < SESSIONS; s++) {
      const id = await a.newSession();
      ids.push(id);
      await a.say(id, ...Array.from({ length: ENTRIES }, (_, i) => `session ${s} entry ${i} ${'z'.repeat(300)}`));
    }

    const child = spawn(process.execPath, [CLI_BIN, 'push', '--json', '--cwd', a.project], { cwd: REPO_ROOT, env: { ...process.env, ...a.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    let stored = 0;
    for (let k = 0; k < KILLS; k++) {
      // Each kill once more batches have landed than at the last one: the push is then between requests or inside one.
      const before = stored;
      stored = await until(`more batches on the server (kill ${k + 1})`, 60_000, async () => {
        const n = (await heads(rig.server)).reduce((sum, h) => sum + h.seq, 0);
        return n > before ? n : undefined;
      }, 20);
      await rig.server.restart(); // SIGKILL of the server's process group, then the same port and data again
    }
    expect(await exited, err).toBe(0);
    const summary = JSON.parse(out) as { pushedEntries: number; requests: number; sessions: { pushed?: { batches: number } }[] };
    expect(summary.pushedEntries).toBe(SESSIONS * ENTRIES);
    const batches = summary.sessions.reduce((n, s) => n + (s.pushed?.batches ?? 0), 0);
    // The sessions' batches went together: far fewer requests than batches, kills and retries included.
    expect(summary.requests).toBeLessThan(batches / 2);

    for (const id of ids) {
      const onServer = await storedIds(rig.server, id);
      expect(new Set(onServer).size, `session ${id}: an entry stored twice`).toBe(onServer.length);
      expect(onServer.sort()).toEqual([...readLog(a.fileOf(id)).ids].sort());
    }
    await b.ok(['pull', '--json']);
    for (const id of ids) {
      expect(readLog(b.fileOf(id)).ids).toHaveLength(ENTRIES);
      expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    }
  }, 240_000);
});
