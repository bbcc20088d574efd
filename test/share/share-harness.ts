// Test harness for sharing: a real local sessync server (file-system store), a temp home, a project with sessions, the CLI.
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalServer, type LocalServer } from '../../worker/local-server.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { decryptShare } from '../../shared/share-crypto.js';
import { decodeSharePayload, type SharePayload } from '../../shared/share-payload.js';
import { runCli, tempDir, type CliResult } from '../helpers/cli.js';

export interface Harness {
  server: LocalServer;
  /** Data folder of the server: every byte it stored is under it. */
  dataDir: string;
  home: string;
  project: string;
  env: Record<string, string>;
  cli(args: string[], opts?: { cwd?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** Writes a session file of `project` and returns its id. */
  writeSession(header: Record<string, unknown>, entries: Record<string, unknown>[]): string;
  close(): Promise<void>;
}

/** A plaintext account unless `encrypt` (the first login would make the new account end-to-end encrypted). */
export async function startHarness(o: { encrypt?: boolean } = {}): Promise<Harness> {
  const tmp = tempDir('sessync-share-');
  const root = realpathSync(tmp.dir);
  const home = join(root, 'home', 'ann');
  const project = join(home, 'src', 'app');
  mkdirSync(project, { recursive: true });
  const dataDir = join(root, 'server-data');
  const server = await startLocalServer({ port: 0, dataDir, host: '127.0.0.1' });
  const env: Record<string, string> = {
    HOME: home,
    SESSYNC_HOME: join(home, '.sessync'),
    SESSYNC_SESSIONS_DIR: join(home, '.sessync', 'sessions'),
  };
  mkdirSync(env.SESSYNC_SESSIONS_DIR!, { recursive: true }); // a named sessions folder must exist
  const cli = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) =>
    runCli(args, { cwd: opts.cwd ?? project, env: { ...env, ...opts.env } });
  const login = await cli(['login', server.url, '--token', server.token, ...(o.encrypt ? [] : ['--no-encrypt'])]);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
  return {
    server,
    dataDir,
    home,
    project,
    env,
    cli,
    writeSession(header, entries) {
      const id = String(header.id);
      const dir = projectDir(env.SESSYNC_SESSIONS_DIR!, project);
      mkdirSync(dir, { recursive: true });
      const lines = [header, ...entries].map((l) => JSON.stringify(l)).join('\n') + '\n';
      writeFileSync(join(dir, sessionFileName(String(header.timestamp), id)), lines);
      return id;
    },
    async close() {
      await server.close();
      tmp.cleanup();
    },
  };
}

/** Every file under `dir`, with its bytes as latin1 text (so any byte sequence can be searched). */
export function storedFiles(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...storedFiles(p));
    else out.push({ path: p, text: readFileSync(p).toString('latin1') });
  }
  return out;
}

/** Fetches a share link's blob the way the viewer does and decrypts it with the link's fragment. */
export async function openLink(url: string): Promise<SharePayload> {
  const u = new URL(url);
  const token = u.pathname.split('/').pop()!;
  const res = await fetch(new URL(`/v1/shares/${token}/blob`, u.origin));
  if (!res.ok) throw new Error(`blob answered ${res.status}: ${await res.text()}`);
  const { ciphertext } = (await res.json()) as { ciphertext: string };
  return decodeSharePayload(await decryptShare(ciphertext, u.hash.slice(1)));
}

const t = (s: number) => new Date(Date.UTC(2026, 0, 2, 10, 0, s)).toISOString();

/**
 * A session with two concurrent branches after B:
 *   A (user) -> B (assistant with a tool call) -> C (tool result) -> D (assistant)     [tip at t4]
 *                                              \-> X (user) -> Y (assistant)           [tip at t6: the leaf]
 */
export function branchySession(cwd: string, id = '019a0000-0000-7000-8000-00000000feed') {
  const header = { type: 'session', version: 3, id, timestamp: t(0), cwd };
  const msg = (eid: string, parentId: string | null, s: number, message: Record<string, unknown>) => ({ type: 'message', id: eid, parentId, timestamp: t(s), message });
  const entries = [
    { type: 'model_change', id: 'e0-model', parentId: null, timestamp: t(0), provider: 'anthropic', modelId: 'claude-sonnet-4-5' },
    msg('e1-a', 'e0-model', 1, { role: 'user', content: [{ type: 'text', text: 'List the files, please.' }], timestamp: 1 }),
    msg('e2-b', 'e1-a', 2, {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run ls.' },
        { type: 'text', text: 'Running ls now.' },
        { type: 'toolCall', id: 'call-1', name: 'bash', arguments: { command: 'ls -la' } },
      ],
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      stopReason: 'toolUse',
      timestamp: 2,
    }),
    msg('e3-c', 'e2-b', 3, { role: 'toolResult', toolCallId: 'call-1', toolName: 'bash', content: [{ type: 'text', text: 'README.md\npackage.json\nsrc' }], isError: false, timestamp: 3 }),
    msg('e4-d', 'e3-c', 4, { role: 'assistant', content: [{ type: 'text', text: 'Three entries: README.md, package.json, src.' }], stopReason: 'stop', timestamp: 4 }),
    msg('e5-x', 'e2-b', 5, { role: 'user', content: 'Actually, skip that and say hi.', timestamp: 5 }),
    msg('e6-y', 'e5-x', 6, { role: 'assistant', content: [{ type: 'text', text: 'Hi!' }], stopReason: 'stop', timestamp: 6 }),
  ];
  return { header, entries };
}
