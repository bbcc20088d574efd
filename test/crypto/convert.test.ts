// `sessync key init` converts a plaintext account in place: killed (-9) in the middle and run again, it leaves no
// plaintext on the server and loses nothing; the other machine imports the key and goes on without pulling twice.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, startNodeServer, useServer } from '../sync/helpers.js';
import { REMOTE, fsObjects, readable } from './crypto-rig.js';

/** Runs `sessync key init` (human output: one stderr line per sealed session) and SIGKILLs it at the first such line. */
function initKilledAfterFirstSession(m: Machine): Promise<{ signal: NodeJS.Signals | null; code: number | null }> {
  const child = spawn(process.execPath, [CLI_BIN, 'key', 'init', '--cwd', m.project], { cwd: REPO_ROOT, env: { ...process.env, ...m.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  createInterface({ input: child.stderr! }).on('line', (l) => {
    if (/: sealed$/.test(l)) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('conversion of a plaintext account', () => {
  const rig = useServer(startNodeServer, 'sessync-convert-');

  it('kill -9 in the middle, then a re-run: no plaintext left, nothing lost, the other machine goes on', async () => {
    const a = new Machine(rig.root, 'laptop', { remote: REMOTE });
    const b = new Machine(rig.root, 'desktop', { remote: REMOTE });
    await a.login(rig.server); // plaintext (--no-encrypt)
    await b.login(rig.server);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await a.newSession();
      ids.push(id);
      for (let j = 0; j < 3; j++) {
        await a.say(id, `session ${i} note ${j}: the vault code is 7781-${i}${j}`);
        await a.ok(['push', '--json']);
      }
    }
    expect(await b.ok(['pull', '--json'])).toMatchObject({ createdSessions: 5, pulledEntries: 15 });
    const secrets = ['vault code', 'Secret-App', a.project];
    expect(readable(fsObjects(rig.server.dataDir!), secrets).length).toBeGreaterThan(15); // the control: plaintext at rest now

    const killed = await initKilledAfterFirstSession(a);
    expect(killed.signal).toBe('SIGKILL');
    expect(readable(fsObjects(rig.server.dataDir!), secrets).length).toBeGreaterThan(0); // interrupted half-way
    // Half-converted: the account is encrypted already, so plaintext pushes are refused; the desktop needs the key.
    await b.say(ids[4]!, 'after the conversion, from the desktop');
    const mid = await b.run(['sync', '--json']);
    expect(mid.code).toBe(1);
    expect(mid.stderr).toMatch(/sessync key import/);

    const done = await a.ok(['key', 'init', '--json']);
    expect(done).toMatchObject({ sessions: 5, left: [] });
    expect(done.sealedMetas).toBeGreaterThanOrEqual(4);
    expect(done.plaintextLeft ?? 0).toBe(0);
    expect(readable(fsObjects(rig.server.dataDir!), secrets)).toEqual([]);
    // A third run has nothing left to do.
    expect(await a.ok(['key', 'init', '--json'])).toMatchObject({ sealedBatches: 0, sealedMetas: 0 });

    // The desktop imports the key: nothing is pulled twice, and new entries flow both ways, sealed.
    const before = ids.map((id) => [...entrySet(b.fileOf(id)).entries()].sort());
    await b.ok(['key', 'import', '--json'], (await a.ok(['key', 'export', '--json'])).key);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, pulledEntries: 0, pushedEntries: 1 });
    expect(ids.map((id) => [...entrySet(b.fileOf(id)).entries()].sort())).toEqual(before);
    await a.say(ids[0]!, 'after the conversion, from the laptop');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0, pushedEntries: 1, pulledEntries: 1 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, pushedEntries: 0, pulledEntries: 1 });
    for (const id of ids) expect([...entrySet(a.fileOf(id)).entries()].sort()).toEqual([...entrySet(b.fileOf(id)).entries()].sort());
    expect(readable(fsObjects(rig.server.dataDir!), [...secrets, 'after the conversion'])).toEqual([]);
  }, 180_000);
});
