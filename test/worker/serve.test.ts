// `sessync serve --json --port 0` as a real process: first line, health, token, persistence across restarts, SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, TestClient, makeBatch, metaFor } from './routes-helpers.js';

interface Started {
  child: ChildProcess;
  first: { url: string; token: string; [k: string]: unknown };
  stderr: () => string;
}

const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function startServe(args: string[], env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [CLI_BIN, 'serve', '--json', '--port', '0', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no first line within 20 s; stderr:\n${err}`)), 20_000);
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve({ child, first: JSON.parse(line), stderr: () => err });
      } catch (e) {
        reject(new Error(`first stdout line is not JSON: ${line}\nstderr:\n${err}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before printing; stderr:\n${err}`)));
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

const http = { fetch: (req: Request) => fetch(req) };

describe('sessync serve', () => {
  it('prints {url, token} first, answers health and the token, keeps data across restarts, stops on SIGTERM', async () => {
    const home = tempDir();
    try {
      const a = await startServe([], { SESSYNC_HOME: home.dir });
      expect(a.first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(a.first.token).toMatch(/^sst_/);
      expect(a.first.url.endsWith(':0')).toBe(false);

      const health = await fetch(`${a.first.url}/v1/health`);
      expect(await health.json()).toEqual({ service: 'sessync', api: 1 });
      const client = new TestClient(http, a.first.token, a.first.url);
      const who = await client.call('GET', '/v1/whoami');
      expect(who.status).toBe(200);
      expect(typeof who.json.account).toBe('string');
      expect((await new TestClient(http, 'sst_wrong', a.first.url).call('GET', '/v1/whoami')).status).toBe(401);
      expect((await client.push(await makeBatch({ session: 'kept', host: 'h', seq: 1, meta: metaFor('kept') }))).status).toBe(201);

      // Default data folder under SESSYNC_HOME, credentials private to the user.
      const creds = join(home.dir, 'server', 'credentials.json');
      expect(existsSync(creds)).toBe(true);
      expect(statSync(creds).mode & 0o777).toBe(0o600);

      a.child.kill('SIGTERM');
      expect(await exitOf(a.child)).toEqual({ code: 0, signal: null });
      await expect(fetch(`${a.first.url}/v1/health`)).rejects.toThrow();

      // A restart on the same data folder keeps the token and the data.
      const b = await startServe([], { SESSYNC_HOME: home.dir });
      expect(b.first.token).toBe(a.first.token);
      const again = new TestClient(http, b.first.token, b.first.url);
      const pulled = await again.pullAll('kept');
      expect(pulled.batches).toHaveLength(1);
      b.child.kill('SIGINT');
      expect((await exitOf(b.child)).code).toBe(0);
    } finally {
      home.cleanup();
    }
  });

  it('--data chooses the folder and a bad --port is refused with exit 2', async () => {
    const dir = tempDir();
    try {
      const s = await startServe(['--data', join(dir.dir, 'srv')], { SESSYNC_HOME: join(dir.dir, 'home') });
      expect(existsSync(join(dir.dir, 'srv', 'credentials.json'))).toBe(true);
      expect(existsSync(join(dir.dir, 'home', 'server'))).toBe(false);
      s.child.kill('SIGTERM');
      expect(await exitOf(s.child)).toEqual({ code: 0, signal: null });

      const bad = spawn(process.execPath, [CLI_BIN, 'serve', '--port', 'abc'], { cwd: REPO_ROOT, stdio: 'ignore' });
      children.push(bad);
      expect((await exitOf(bad)).code).toBe(2);
    } finally {
      dir.cleanup();
    }
  });
});

describe('Node self-hosting entry (dist/server.mjs, bundled from worker/node-entry.ts)', () => {
  it('serves on the store the environment names, with the admin secret from SESSYNC_ADMIN_SECRET, and stops on SIGTERM', async () => {
    const dir = tempDir();
    try {
      const child = spawn(process.execPath, ['dist/server.mjs'], {
        cwd: REPO_ROOT,
        env: { ...process.env, PORT: '0', SESSYNC_STORE: 'fs', SESSYNC_DATA_DIR: join(dir.dir, 'objects'), SESSYNC_ADMIN_SECRET: TEST_ADMIN_SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let err = '';
      child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`node-entry exited with ${code}: ${err}`)));
      });
      const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
      expect(url, line).toBeDefined();
      const admin = new TestClient(http, TEST_ADMIN_SECRET, url!);
      const created = await admin.call('POST', '/v1/admin/accounts', { name: 'me' });
      expect(created.status).toBe(201);
      const me = new TestClient(http, created.json.token, url!);
      expect((await me.push(await makeBatch({ session: 'self', host: 'h', seq: 1 }))).status).toBe(201);
      expect(existsSync(join(dir.dir, 'objects'))).toBe(true);
      child.kill('SIGTERM');
      expect(await exitOf(child)).toEqual({ code: 0, signal: null });
    } finally {
      dir.cleanup();
    }
  });
});
