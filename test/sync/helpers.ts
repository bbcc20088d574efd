// Sync test rig: real servers (`sessync serve` child process, or `wrangler dev` workerd) and "machines" (one SESSYNC_HOME each).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll } from 'vitest';
import { CLI_BIN, REPO_ROOT, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { canonicalJson } from '../../shared/merge.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { serializeLine } from '../../shared/jsonl.js';
import { SyncState } from '../../cli/sync/sync-state.js';
import type { SessionSyncState } from '../../cli/sync/session-sync-state.js';

export interface TestServer {
  url: string;
  token: string;
  kind: 'node' | 'workerd';
  /** The file store of a Node server (`--data DIR`): tests plant what an older server would have stored. */
  dataDir?: string;
  /** Stops the server (SIGKILL of its process group). */
  stop(): Promise<void>;
  /** Stops it and starts it again on the same port and data. */
  restart(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  });
}

/** `sessync serve --json --port P --data DIR` in its own process group; resolves with its first stdout line. */
function spawnServe(port: number, dataDir: string, home: string): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = spawn(process.execPath, [CLI_BIN, 'serve', '--json', '--port', String(port), '--data', dataDir], {
    cwd: REPO_ROOT,
    env: { ...process.env, SESSYNC_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sessync serve printed nothing in 20 s; stderr:\n${err}`)), 20_000);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      try {
        const v = JSON.parse(line) as { url: string; token: string };
        resolve({ child, url: v.url, token: v.token });
      } catch {
        reject(new Error(`first line of serve is not JSON: ${line}\n${err}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`sessync serve exited with ${code}; stderr:\n${err}`)));
  });
}

/** The real Node service on a temp data dir. Port 0 first, then the port it took, so a restart keeps the URL. */
export async function startNodeServer(): Promise<TestServer & { cleanup(): void }> {
  const dir = tempDir('sessync-srv-');
  const data = join(dir.dir, 'data');
  const home = join(dir.dir, 'home');
  mkdirSync(home);
  let s = await spawnServe(0, data, home);
  const port = Number(new URL(s.url).port);
  const server: TestServer & { cleanup(): void } = {
    url: s.url,
    token: s.token,
    kind: 'node',
    dataDir: data,
    stop: () => killGroup(s.child),
    async restart() {
      await killGroup(s.child);
      s = await spawnServe(port, data, home);
    },
    cleanup: () => dir.cleanup(),
  };
  return server;
}

const ADMIN_SECRET = 'test-admin-secret-0123456789abcdef';

async function waitHealthy(url: string, ms: number, log: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(`${url}/v1/health`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`wrangler dev not healthy at ${url} within ${ms} ms:\n${log()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `wrangler dev --local` (workerd, R2 persisted to a temp dir) in its own process group; an account made through the admin API. */
export async function startWorkerdServer(): Promise<TestServer & { cleanup(): void }> {
  const dir = tempDir('sessync-wrangler-');
  const port = await freePort();
  let log = '';
  const start = () => {
    const child = spawn(
      join(REPO_ROOT, 'node_modules/.bin/wrangler'),
      ['dev', '--local', '--port', String(port), '--ip', '127.0.0.1', '--persist-to', join(dir.dir, 'state'), '--var', `SESSYNC_ADMIN_SECRET:${ADMIN_SECRET}`, '--show-interactive-dev-session=false'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', XDG_CONFIG_HOME: join(dir.dir, 'config') },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    child.stdout!.setEncoding('utf8').on('data', (d) => (log += d));
    child.stderr!.setEncoding('utf8').on('data', (d) => (log += d));
    return child;
  };
  let child = start();
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, 60_000, () => log);
  const r = await fetch(`${url}/v1/admin/accounts`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_SECRET}`, 'content-type': 'application/json' }, body: '{}' });
  if (!r.ok) throw new Error(`admin account creation failed: ${r.status} ${await r.text()}`);
  const { token } = (await r.json()) as { token: string };
  return {
    url,
    token,
    kind: 'workerd',
    stop: () => killGroup(child),
    async restart() {
      await killGroup(child);
      child = start();
      await waitHealthy(url, 60_000, () => log);
    },
    cleanup: () => dir.cleanup(),
  };
}

/** One machine: its own SESSYNC_HOME, and a project folder that is a git repo with the shared remote. */
export class Machine {
  readonly home: string;
  readonly project: string;
  private readonly extraEnv: Record<string, string>;

  /** opts.project: use this project folder (e.g. one already set up) instead of making `<root>/<name>/src/app`. */
  constructor(root: string, name: string, opts: { remote?: string; env?: Record<string, string>; project?: string } = {}) {
    this.home = join(root, name, 'home');
    this.project = opts.project ?? join(root, name, 'src', 'app');
    mkdirSync(this.home, { recursive: true });
    mkdirSync(this.project, { recursive: true });
    if (opts.remote !== undefined) {
      execFileSync('git', ['init', '-q', this.project]);
      execFileSync('git', ['-C', this.project, 'remote', 'add', 'origin', opts.remote]);
    }
    this.extraEnv = opts.env ?? {};
  }

  get env(): Record<string, string> {
    return { SESSYNC_HOME: this.home, ...this.extraEnv };
  }

  run(args: string[], opts: { input?: string; timeoutMs?: number; wrap?: (argv: string[]) => string[] } = {}): Promise<CliResult> {
    return runCli([...args, '--cwd', this.project], { env: this.env, ...opts });
  }

  /** Runs and demands exit 0; returns parsed JSON when --json was given. */
  async ok(args: string[], input?: string): Promise<any> {
    const r = await this.run(args, input === undefined ? {} : { input });
    if (r.code !== 0) throw new Error(`sessync ${args.join(' ')} exited ${r.code}\nstdout:${r.stdout}\nstderr:${r.stderr}`);
    return args.includes('--json') ? r.json() : r.stdout;
  }

  /**
   * Logs in. A first login to a new account would make it end-to-end encrypted; the sync tests that are not about
   * encryption keep plaintext accounts (--no-encrypt), the encryption tests pass `{ encrypt: true }`.
   */
  login(server: TestServer, o: { encrypt?: boolean } = {}): Promise<any> {
    return this.ok(['login', server.url, '--token', server.token, '--json', ...(o.encrypt ? [] : ['--no-encrypt'])]);
  }

  async newSession(): Promise<string> {
    return ((await this.ok(['new', '--json'])) as { id: string }).id;
  }

  async say(session: string, ...texts: string[]): Promise<void> {
    const lines = texts.map((t) => JSON.stringify({ type: 'message', message: { role: 'user', content: t } })).join('\n') + '\n';
    await this.ok(['append', session, '--json'], lines);
  }

  /** Per-server sync state folder (sync/servers/<key>) of the one server this machine has synced with. */
  serverState(): string {
    const base = join(this.home, 'sync', 'servers');
    let names: string[] = [];
    try {
      names = readdirSync(base);
    } catch {
      return join(base, 'none-yet');
    }
    if (names.length !== 1) throw new Error(`expected state for one server in ${base}, found ${names.length}`);
    return join(base, names[0]!);
  }

  /**
   * A session's sync state on the one server, read as the CLI reads it: the pack, the session's own file over it, a
   * killed run's journal over both. A test that changes it uses writeSyncState.
   */
  async syncState(session: string): Promise<SessionSyncState | null> {
    return (await new SyncState(this.home, basename(this.serverState())).all()).get(session) ?? null;
  }

  /** Writes a session's state as a single-session run does: to the session's own file, which wins over the pack. */
  async writeSyncState(state: SessionSyncState): Promise<void> {
    await new SyncState(this.home, basename(this.serverState())).save(state);
  }

  /** The session's own state file (written by a single-session run; newer than the pack while it is there). */
  ownStatePath(session: string): string {
    return join(this.serverState(), 'sessions', `${session}.json`);
  }

  /** Every session file under this machine's sessions root. */
  sessionFiles(root = join(this.home, 'sessions')): string[] {
    const out: string[] = [];
    const walk = (d: string) => {
      let names: string[];
      try {
        names = readdirSync(d);
      } catch {
        return;
      }
      for (const n of names) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (n.endsWith('.jsonl')) out.push(p);
      }
    };
    walk(root);
    return out.sort();
  }

  fileOf(session: string, root?: string): string {
    const f = this.sessionFiles(root).filter((p) => p.endsWith(`_${session}.jsonl`));
    if (f.length !== 1) throw new Error(`expected one file for ${session} on ${this.home}, found ${f.length}: ${f.join(', ')}`);
    return f[0]!;
  }
}

/** A machine whose host id is `hostId` (a host.json as an older sessync wrote it, adopted): the hosts' sort order is the test's. */
export function machineWithHost(root: string, name: string, hostId: string, o: ConstructorParameters<typeof Machine>[2] = {}): Machine {
  const m = new Machine(root, name, o);
  mkdirSync(join(m.home, 'sync'), { recursive: true, mode: 0o700 });
  writeFileSync(join(m.home, 'sync', 'host.json'), JSON.stringify({ hostId }) + '\n', { mode: 0o600 });
  return m;
}

/** Parsed lines of a session file: header, entries, and the ids in file order (duplicates visible). */
export function readLog(path: string): { header: Record<string, unknown>; entries: Record<string, unknown>[]; ids: string[] } {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const [h, ...rest] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { header: h!, entries: rest, ids: rest.map((e) => String(e.id)) };
}

/** The ids of entries whose parent is not on a line before them (a root's null parent is fine). */
export function childrenBeforeParents(path: string): string[] {
  const seen = new Set<string>();
  const bad: string[] = [];
  for (const e of readLog(path).entries) {
    const p = e.parentId as string | null;
    if (p !== null && !seen.has(p)) bad.push(String(e.id));
    seen.add(String(e.id));
  }
  return bad;
}

/** Entry set by id -> canonical content, for cross-machine equality. */
export function entrySet(path: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of readLog(path).entries) m.set(String(e.id), canonicalJson(e));
  return m;
}

export { tempDir, runCli, REPO_ROOT };

/** beforeAll/afterAll pair: a server (Node by default) and a temp root for machines, both cleaned up after. */
export function useServer(start: () => Promise<TestServer & { cleanup(): void }> = startNodeServer, prefix = 'sessync-sync-'): { server: TestServer; root: string } {
  const box = {} as { server: TestServer & { cleanup(): void }; rootDir: { dir: string; cleanup(): void } };
  const view = {
    get server() {
      return box.server;
    },
    get root() {
      return box.rootDir.dir;
    },
  };
  beforeAll(async () => {
    box.server = await start();
    box.rootDir = tempDir(prefix);
  }, 90_000);
  afterAll(async () => {
    await box.server?.stop();
    box.server?.cleanup();
    box.rootDir?.cleanup();
  });
  return view;
}

/** Two logged-in machines with clones of one repository; the first has a session with the given entries. */
export async function pairWithSession(root: string, names: [string, string], remotes: [string, string], server: TestServer, ...texts: string[]): Promise<{ a: Machine; b: Machine; id: string }> {
  const a = new Machine(root, names[0], { remote: remotes[0] });
  const b = new Machine(root, names[1], { remote: remotes[1] });
  await a.login(server);
  await b.login(server);
  const id = await a.newSession();
  if (texts.length) await a.say(id, ...texts);
  return { a, b, id };
}

/**
 * pairWithSession on one repository, then a sync on each: the session is on the server and in both machines' folders.
 * Where the rm, restore and status-after-rm tests start (one of them then removes its copy).
 */
export async function syncedPair(root: string, names: [string, string], remote: string, server: TestServer, ...texts: string[]): Promise<{ a: Machine; b: Machine; id: string }> {
  const pair = await pairWithSession(root, names, [remote, remote], server, ...texts);
  await pair.a.ok(['sync', '--json']);
  await pair.b.ok(['sync', '--json']);
  return pair;
}

/** Session n's id in plantSession's files. */
export function plantedId(n: number): string {
  return `${n.toString().padStart(8, '0')}-0000-4000-8000-000000000000`;
}

/**
 * Writes (or, when it exists, appends to) session n's file as pi would, header then chained entries, straight into
 * the machine's sessions root: many sessions without a CLI run each. Returns the session id.
 */
export function plantSession(m: Machine, n: number, entries: number, o: { from?: number; pad?: number } = {}): string {
  const id = plantedId(n);
  const timestamp = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
  const cwd = realpathSync(m.project);
  const dir = projectDir(join(m.home, 'sessions'), cwd);
  const path = join(dir, sessionFileName(timestamp, id));
  const from = o.from ?? 0;
  let text = from === 0 ? serializeLine({ type: 'session', version: 3, id, timestamp, cwd }) + '\n' : '';
  for (let i = from; i < from + entries; i++) {
    const entry = { type: 'message', id: `s${n}-e${i}`, parentId: i === 0 ? null : `s${n}-e${i - 1}`, timestamp, message: { role: 'user', content: `session ${n} entry ${i} ${'w'.repeat(o.pad ?? 200)}` } };
    text += serializeLine(entry) + '\n';
  }
  mkdirSync(dir, { recursive: true });
  if (from === 0) writeFileSync(path, text);
  else appendFileSync(path, text);
  return id;
}
