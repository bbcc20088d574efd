// `sessync serve --json --port 0` as a real process: first line, health, token, persistence across restarts, SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

/** Every folder and file under `root` (root included) whose mode lets anyone but the owner in. */
function openToOthers(root: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = statSync(p);
    const want = st.isDirectory() ? 0o700 : 0o600;
    if ((st.mode & 0o777) !== want) out.push(`${p} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const n of readdirSync(p)) visit(join(p, n));
  };
  visit(root);
  return out;
}

/** Starts `node dist/server.mjs` with `env`; resolves with its first stdout line, or its exit code and stderr. */
function startSelfHost(env: Record<string, string>): Promise<{ child: ChildProcess; line?: string; exit?: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['dist/server.mjs'], { cwd: REPO_ROOT, env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve({ child, line, stderr: err }));
    child.once('exit', (code) => resolve({ child, exit: code, stderr: err }));
  });
}

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
      const { child, line, stderr } = await startSelfHost({ SESSYNC_STORE: 'fs', SESSYNC_DATA_DIR: join(dir.dir, 'objects'), SESSYNC_ADMIN_SECRET: TEST_ADMIN_SECRET });
      const url = /listening on (http:\/\/\S+)/.exec(line ?? '')?.[1];
      expect(url, stderr).toBeDefined();
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

describe('issue 9, defect 9: server data is private to its owner (0700 folders, 0600 files), whoever creates it', () => {
  it('node dist/server.mjs creates its fs store folder and every object private', async () => {
    const dir = tempDir();
    try {
      const data = join(dir.dir, 'new', 'objects');
      const { child, line, stderr } = await startSelfHost({ SESSYNC_STORE: 'fs', SESSYNC_DATA_DIR: data, SESSYNC_ADMIN_SECRET: TEST_ADMIN_SECRET });
      const url = /listening on (http:\/\/\S+)/.exec(line ?? '')?.[1];
      expect(url, stderr).toBeDefined();
      const created = await new TestClient(http, TEST_ADMIN_SECRET, url!).call('POST', '/v1/admin/accounts', { name: 'me' });
      expect((await new TestClient(http, created.json.token, url!).push(await makeBatch({ session: 'p', host: 'h', seq: 1, meta: metaFor('p') }))).status).toBe(201);
      expect(readdirSync(data).length).toBeGreaterThan(1);
      expect(openToOthers(data)).toEqual([]);
      expect(statSync(join(dir.dir, 'new')).mode & 0o777).toBe(0o700);
      child.kill('SIGTERM');
      await exitOf(child);
    } finally {
      dir.cleanup();
    }
  });

  it('sessync serve --data DIR on an existing 0755 folder narrows it, and everything it writes is private', async () => {
    const dir = tempDir();
    try {
      const data = join(dir.dir, 'srv');
      mkdirSync(data, { mode: 0o755 });
      chmodSync(data, 0o755);
      const s = await startServe(['--data', data], { SESSYNC_HOME: join(dir.dir, 'home') });
      const client = new TestClient(http, s.first.token, s.first.url);
      expect((await client.push(await makeBatch({ session: 'p', host: 'h', seq: 1, meta: metaFor('p') }))).status).toBe(201);
      expect(openToOthers(data)).toEqual([]);
      s.child.kill('SIGTERM');
      expect((await exitOf(s.child)).code).toBe(0);
    } finally {
      dir.cleanup();
    }
  });
});

describe('issue 9, defect 10: the admin secret has a minimum', () => {
  it('node dist/server.mjs refuses SESSYNC_ADMIN_SECRET=x and says how to make one, before touching the store', async () => {
    const dir = tempDir();
    try {
      const data = join(dir.dir, 'objects');
      const r = await startSelfHost({ SESSYNC_STORE: 'fs', SESSYNC_DATA_DIR: data, SESSYNC_ADMIN_SECRET: 'x' });
      expect(r.line).toBeUndefined();
      expect(r.exit).toBe(1);
      expect(r.stderr).toMatch(/at least 32/);
      expect(r.stderr).toContain('openssl rand -base64 32');
      expect(existsSync(data)).toBe(false);
      const repeated = await startSelfHost({ SESSYNC_STORE: 'fs', SESSYNC_DATA_DIR: data, SESSYNC_ADMIN_SECRET: 'changeme'.repeat(5) });
      expect(repeated.exit).toBe(1);
      expect(repeated.stderr).toMatch(/does not look random/);
    } finally {
      dir.cleanup();
    }
  });

  it('sessync serve refuses a short SESSYNC_ADMIN_SECRET; its own generated secret works on the admin API', async () => {
    const dir = tempDir();
    try {
      const bad = spawn(process.execPath, [CLI_BIN, 'serve', '--port', '0', '--data', join(dir.dir, 'weak')], { cwd: REPO_ROOT, env: { ...process.env, SESSYNC_ADMIN_SECRET: 'short-secret' }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(bad);
      let err = '';
      bad.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
      expect((await exitOf(bad)).code).not.toBe(0);
      expect(err).toContain('openssl rand -base64 32');

      const s = await startServe(['--data', join(dir.dir, 'srv')], { SESSYNC_HOME: join(dir.dir, 'home') });
      const creds = JSON.parse(readFileSync(join(dir.dir, 'srv', 'credentials.json'), 'utf8')) as { adminSecret: string };
      expect((await new TestClient(http, creds.adminSecret, s.first.url).call('POST', '/v1/admin/accounts', { name: 'second' })).status).toBe(201);
      s.child.kill('SIGTERM');
      await exitOf(s.child);
    } finally {
      dir.cleanup();
    }
  });
});

describe('issue 9, defect 11: temp files a crash left never look like data and are cleaned on start', () => {
  it('sessync serve removes a dead writer\'s credentials and blob temp files on start; the store lists only data', async () => {
    const dir = tempDir();
    try {
      const data = join(dir.dir, 'srv');
      const first = await startServe(['--data', data], { SESSYNC_HOME: join(dir.dir, 'home') });
      const client = new TestClient(http, first.first.token, first.first.url);
      expect((await client.push(await makeBatch({ session: 'k', host: 'h', seq: 1, meta: metaFor('k') }))).status).toBe(201);
      first.child.kill('SIGKILL');
      await exitOf(first.child);
      // What kill -9 in the middle of writes leaves: temp files named after the dead process.
      const dead = first.child.pid!;
      writeFileSync(join(data, 'blobs', '.tmp', `${dead}-0badf00d-1234`), '{"envelope": half a batch');
      writeFileSync(join(data, `credentials.json.${dead}-0badf00d.tmp`), '{"adminSecret": "half');
      const second = await startServe(['--data', data], { SESSYNC_HOME: join(dir.dir, 'home') });
      expect(readdirSync(join(data, 'blobs', '.tmp'))).toEqual([]);
      expect(readdirSync(data).sort()).toEqual(['blobs', 'credentials.json']);
      expect(second.first.token).toBe(first.first.token);
      const pulled = await new TestClient(http, second.first.token, second.first.url).pullAll('k');
      expect(pulled.batches).toHaveLength(1);
      second.child.kill('SIGTERM');
      await exitOf(second.child);
    } finally {
      dir.cleanup();
    }
  });
});
