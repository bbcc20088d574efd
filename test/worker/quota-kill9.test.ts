// kill -9 of the real Node server during multi-session pushes on an account with a byte quota: once the client's retries are done, the usage counter is what a fresh count finds, no batch missed or counted twice.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, startNodeServer, useServer } from '../sync/helpers.js';
import { killAsBatchesLand } from '../sync/kill-rig.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FsStore } from '../../worker/store/fs-store.js';
import { countUsage } from '../../worker/quota.js';
import { keys } from '../../shared/keys.js';

const SESSIONS = 8;
const ENTRIES = 30;
const KILLS = 3;

describe('kill -9 of the server with a byte quota', () => {
  const rig = useServer(startNodeServer, 'sessync-quota-kill-');

  it(`a push of ${SESSIONS} sessions through ${KILLS} server kills: the usage counter ends at a fresh count`, async () => {
    // The admin secret and account of the server's first start; the counter is read from its data folder after.
    const creds = JSON.parse(readFileSync(join(rig.server.dataDir!, 'credentials.json'), 'utf8')) as { adminSecret: string; account: string };
    const store = new FsStore(join(rig.server.dataDir!, 'blobs'));
    const set = await fetch(`${rig.server.url}/v1/admin/accounts/${creds.account}/quota`, { method: 'PUT', headers: { authorization: `Bearer ${creds.adminSecret}`, 'content-type': 'application/json' }, body: JSON.stringify({ maxBytes: 1_000_000_000 }) });
    expect(set.status, await set.text()).toBe(200);
    const who = { account: creds.account };

    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/quota-kill.git', env: { SESSYNC_SYNC_BATCH_BYTES: '1500' } });
    await a.login(rig.server);
    for (let s = 0; s < SESSIONS; s++) {
      const id = await a.newSession();
      await a.say(id, ...Array.from({ length: ENTRIES }, (_, i) => `session ${s} entry ${i} ${'q'.repeat(300)}`));
    }
    const child = spawn(process.execPath, [CLI_BIN, 'push', '--json', '--cwd', a.project], { cwd: REPO_ROOT, env: { ...process.env, ...a.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    child.stdout!.resume();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await killAsBatchesLand(rig.server, KILLS);
    expect(await exited, err).toBe(0);
    // A later push settles what the counter still names pending (one more session, one request or so).
    const extra = await a.newSession();
    await a.say(extra, 'one more');
    await a.ok(['push', '--json']);

    const obj = await store.get(keys.usage(who.account));
    const counter = JSON.parse(new TextDecoder().decode(obj!.body)) as { bytes: number; pending?: unknown[] };
    const truth = (await countUsage(store, who.account)).bytes;
    expect(truth).toBeGreaterThan(SESSIONS * ENTRIES * 300);
    expect({ bytes: counter.bytes, pending: counter.pending ?? [] }).toEqual({ bytes: truth, pending: [] });
  }, 240_000);
});
