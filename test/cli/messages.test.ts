// Messages say one true thing once: resume prints a short id once when it is the whole id; --watch's pace is one figure everywhere.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { freePort } from '../sync/helpers.js';
import { cliEnv, writeLines, type CliEnv } from './cli-env.js';

describe('messages', () => {
  let t: CliEnv;
  beforeEach(() => {
    t = cliEnv();
  });
  afterEach(() => t.cleanup());

  it('resume shows pi\'s 8-hex entry ids once, and a UUIDv7 as short form + full id', async () => {
    const sid = '3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b'; // pi's session ids are UUIDv4
    const dir = projectDir(t.root, t.project);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, sessionFileName('2026-01-01T00:00:00.000Z', sid));
    writeLines(path, [
      { type: 'session', version: 3, id: sid, timestamp: '2026-01-01T00:00:00.000Z', cwd: t.project },
      { type: 'message', id: '1c2d3e4f', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi' } },
      { type: 'message', id: '90d29a23', parentId: '1c2d3e4f', timestamp: '2026-01-01T00:00:02.000Z', message: { role: 'user', content: 'again' } },
    ]);
    const pi = await t.run(['resume', sid.slice(0, 8)]);
    expect(pi.code, pi.stderr).toBe(0);
    expect(pi.stdout).toMatch(/^leaf {5}90d29a23$/m);
    expect(pi.stdout).not.toMatch(/90d29a23 {2}90d29a23/);
    expect(pi.stdout).toMatch(new RegExp(`^session  3f2a9c1e  ${sid}$`, 'm'));

    const own = (await t.json<{ id: string }>(['new'])).id;
    const r = await t.run(['resume', own.slice(-8)]);
    expect(r.stdout).toMatch(new RegExp(`^session  ${own.slice(-8)}  ${own}$`, 'm'));
    expect(r.stdout).toMatch(/^leaf {5}\(empty session\)$/m);
  });

  it('--watch\'s pace is the same figure in the help, the README and the watcher\'s own first line', async () => {
    const help = (await t.run(['sync', '--help'])).stdout;
    const pace = /--watch: keeps syncing: (checks for new entries every [\d.]+ s and pushes them at once; pulls every [\d.]+ s)/.exec(help)?.[1];
    expect(pace, help).toBeDefined();
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`sessync sync --watch            # keep syncing: ${pace}`);
    // No other figure for it anywhere in the README.
    expect(readme).not.toMatch(/--watch[^\n]*within \d+ ?(s|ms)\b/);

    // The watcher itself (logged in to a closed port: its first line comes before any request).
    mkdirSync(t.home, { recursive: true });
    writeFileSync(join(t.home, 'login.json'), JSON.stringify({ url: `http://127.0.0.1:${await freePort()}`, token: 'x' }));
    const child = spawn(process.execPath, [CLI_BIN, 'sync', '--watch', '--cwd', t.project], { cwd: REPO_ROOT, env: { ...process.env, SESSYNC_HOME: t.home }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((r) => child.once('exit', r));
    const first = await new Promise<string>((r) => createInterface({ input: child.stdout! }).once('line', r));
    child.kill('SIGTERM');
    await exited; // before the folder it writes in is removed
    expect(first).toBe(`watching this project: ${pace}; Ctrl-C stops`);
  });
});
