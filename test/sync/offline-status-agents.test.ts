// Offline `status` over several agents (pi, Claude Code, Codex): the server is tried once for the whole run, with no
// wait, and said to be unreachable once; the other agents' blocks say they did not ask again. A closed port.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { Machine, freePort } from './helpers.js';

describe('offline status with three agents', () => {
  let root: { dir: string; cleanup(): void };
  let m: Machine;
  beforeAll(async () => {
    root = tempDir('sessync-offline-agents-');
    const claude = join(root.dir, 'claude');
    const codex = join(root.dir, 'codex');
    mkdirSync(join(claude, 'projects'), { recursive: true });
    mkdirSync(join(codex, 'sessions'), { recursive: true });
    m = new Machine(root.dir, 'm', { env: { CLAUDE_CONFIG_DIR: claude, CODEX_HOME: codex } });
    await m.say(await m.newSession(), 'written offline');
    // `sessync login` needs the server; the saved login is what status reads. Nothing listens on that port.
    writeFileSync(join(m.home, 'login.json'), JSON.stringify({ url: `http://127.0.0.1:${await freePort()}`, token: 'sst_offline-test', account: 'acct-offline' }));
  });
  afterAll(() => root.cleanup());

  it('waits for no retry, names the unreachable server once, and every agent block says not checked', async () => {
    const r = await m.run(['status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('here (pi): 1 session(s), 1 to push');
    expect(r.stdout).toContain('here (claude-code): 0 session(s)');
    expect(r.stdout).toContain('here (codex): 0 session(s)');
    // No "waiting ... for retry" line: a refused connection is the answer, for every agent of the run.
    expect(r.stderr).not.toMatch(/waiting [\d.]+ s for retry/);
    expect(r.stdout.match(/ECONNREFUSED/g)).toHaveLength(1);
    const server = r.stdout.split('\n').filter((l) => l.startsWith('server'));
    expect(server).toHaveLength(3);
    expect(server[0]).toMatch(/^server \(pi\): http:\/\/127\.0\.0\.1:\d+: not checked \(cannot reach the sessync server .*ECONNREFUSED/);
    for (const l of server.slice(1)) expect(l).toMatch(/: not checked \(not asked again: the server could not be reached earlier in this run\)$/);

    const j = await m.run(['status', '--json']);
    expect(j.code).toBe(0);
    expect(j.stderr).toBe('');
    const doc = j.json();
    expect(doc).toMatchObject({ serverChecked: false, serverError: { code: 'unavailable' }, toPull: null });
    for (const a of ['pi', 'claude-code', 'codex']) expect(doc.agents[a]).toMatchObject({ serverChecked: false, serverError: { code: 'unavailable' } });
  });
});

describe('status with three agents against a server that answers 503', () => {
  let root: { dir: string; cleanup(): void };
  let m: Machine;
  let server: Server;
  let requests = 0;
  beforeAll(async () => {
    root = tempDir('sessync-503-agents-');
    const claude = join(root.dir, 'claude');
    mkdirSync(join(claude, 'projects'), { recursive: true });
    m = new Machine(root.dir, 'm', { env: { CLAUDE_CONFIG_DIR: claude } });
    await m.say(await m.newSession(), 'written while the server fails');
    // A real HTTP server on loopback that answers every request 503: it is reachable, only failing.
    server = createServer((_req, res) => {
      requests++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unavailable', message: 'down for maintenance', retryable: true } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    writeFileSync(join(m.home, 'login.json'), JSON.stringify({ url: `http://127.0.0.1:${port}`, token: 'sst_503-test', account: 'acct-503' }));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    root.cleanup();
  });

  it('the next agent asks again, and no block says the server could not be reached', async () => {
    const r = await m.run(['status', '--agent', 'all']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('not asked again');
    const before = requests;
    expect(before).toBeGreaterThan(1);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('server'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
