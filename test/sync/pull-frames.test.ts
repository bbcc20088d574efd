// The client's frames pulls against the real Node server: encrypted sessions pushed by an older client (base64 records)
// and by this one (raw) both open; a hostile server's torn or lying frames answer is refused with nothing written.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { createAccountKey } from '../../cli/keys/key-actions.js';
import { saveKey } from '../../cli/keys/key-store.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { isSessyncError } from '../../shared/errors.js';
import { tempDir, useServer } from './helpers.js';
import { createHash } from 'node:crypto';
import { keys } from '../../shared/keys.js';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { TEST_ADMIN_SECRET, adminCreateAccount, appFetcher } from '../worker/routes-helpers.js';
import { writeSession } from './session-files.js';

const TS = '2026-01-01T00:00:00.000Z';

/** Session files of `home` for `cwd`, by name. */
function filesOf(home: string, cwd: string): string[] {
  const dir = projectDir(join(home, 'sessions'), cwd);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.jsonl')) : [];
}

describe('frames pulls of an encrypted account', () => {
  const ctx = useServer(undefined, 'sessync-pull-frames-enc-');
  it('open batches an older client pushed as base64 and batches pushed raw, pulled as frames into an empty machine', async () => {
    const { server, root } = ctx;
    const cwd = join(root, 'enc-project');
    mkdirSync(cwd, { recursive: true });
    const [laptop, desktop] = ['enc-laptop', 'enc-desktop'].map((n) => ({ SESSYNC_HOME: join(root, n) })) as [{ SESSYNC_HOME: string }, { SESSYNC_HOME: string }];
    const account = (await new ApiClient({ url: server.url, token: server.token }).whoami()).account;
    const made = await createAccountKey({ api: new ApiClient({ url: server.url, token: server.token, account }), account, env: laptop });
    await saveKey(desktop, server.url, account, made.exported);
    const older = ['00000001-enc-older', '00000002-enc-older'];
    const newer = ['00000003-enc-newer', '00000004-enc-newer'];
    const paths = new Map<string, string>();
    for (const id of older) paths.set(id, writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 4));
    // An older client: it pushes JSON, the server stores the ciphertext as base64 text.
    const json = new ApiClient({ url: server.url, token: server.token, account });
    json.takesFrames = false;
    expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: json })).toMatchObject({ failed: 0, pushedSessions: 2 });
    for (const id of newer) paths.set(id, writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 3));
    expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: new ApiClient({ url: server.url, token: server.token, account }) })).toMatchObject({ failed: 0, pushedSessions: 2 });

    const types: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (new URL(String(input)).pathname === '/v1/pulls') types.push(res.headers.get('content-type') ?? '');
      return res;
    };
    const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url: server.url, token: server.token, account, fetch: recording }) });
    expect(pull).toMatchObject({ failed: 0, createdSessions: 4, pulledEntries: 14, damagedBatches: 0 });
    expect(types).toEqual([FRAMES_TYPE]);
    for (const [id, path] of paths) {
      expect(readFileSync(join(projectDir(join(desktop.SESSYNC_HOME, 'sessions'), cwd), sessionFileName(TS, id)), 'utf8'), id).toBe(readFileSync(path, 'utf8'));
    }
  }, 90_000);
});

/** What a hostile server does to a frames answer (the bytes as the real server sent them). */
const LIES: Record<string, (b: Buffer, sessions: string[]) => Buffer> = {
  'cut short inside a body': (b) => b.subarray(0, b.length - 40),
  'a header whose byte count lies': (b) => Buffer.from(b.toString('latin1').replace(/"bytes":(\d+)/, (_, n: string) => `"bytes":${Number(n) + 7}`), 'latin1'),
  'the last session without its end frame': (b) => b.subarray(0, b.lastIndexOf('{"ok":true')),
  'a batch filed under another session': (b, s) => Buffer.from(b.toString('latin1').replace(`"session":"${s[0]}","envelope"`, `"session":"${s[1]}","envelope"`), 'latin1'),
  'bytes after the last frame': (b) => Buffer.concat([b, Buffer.from('{"ok":tru')]),
};

describe('a hostile server\'s frames answer', () => {
  const ctx = useServer(undefined, 'sessync-pull-frames-hostile-');
  let proxy: Server;
  let url = '';
  let lie: ((b: Buffer, sessions: string[]) => Buffer) | null = null;
  let sessions: string[] = [];
  let lied = 0;

  beforeAll(async () => {
    // A real HTTP server between client and the real one, standing for a broken or hostile server: it passes every
    // request on, and rewrites the frames answers of POST /v1/pulls.
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k))) as Record<string, string>;
        const up = await fetch(ctx.server.url + req.url, { method: req.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
        let body: Buffer = Buffer.from(await up.arrayBuffer());
        const type = up.headers.get('content-type') ?? '';
        if (lie && req.url === '/v1/pulls' && type === FRAMES_TYPE) {
          body = lie(body, sessions);
          lied++;
        }
        res.writeHead(up.status, { 'content-type': type, 'content-length': body.length });
        res.end(body);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

  it.each(Object.keys(LIES))('%s: refused whole, no session file and no sync state written', async (name) => {
    const { server, root } = ctx;
    const tag = name.replace(/[^a-z]+/g, '-');
    const cwd = join(root, `hostile-${tag}`);
    mkdirSync(cwd, { recursive: true });
    const laptop = { SESSYNC_HOME: join(root, `hostile-laptop-${tag}`) };
    const desktop = { SESSYNC_HOME: join(root, `hostile-desktop-${tag}`) };
    const prefix = String(Object.keys(LIES).indexOf(name)).padStart(4, '0');
    sessions = [`${prefix}0001-hostile`, `${prefix}0002-hostile`, `${prefix}0003-hostile`];
    for (const id of sessions) writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 3);
    expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: new ApiClient({ url: server.url, token: server.token }) })).toMatchObject({ failed: 0, pushedSessions: 3 });

    lie = LIES[name]!;
    lied = 0;
    let err: unknown;
    try {
      await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url, token: server.token, retries: 0 }) });
    } catch (e) {
      err = e;
    } finally {
      lie = null;
    }
    expect(lied).toBeGreaterThan(0);
    expect(isSessyncError(err, 'wrong_server'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/frames answer is malformed/);
    expect(filesOf(desktop.SESSYNC_HOME, cwd)).toEqual([]);
    const states = join(desktop.SESSYNC_HOME, 'sync', 'servers');
    const stateFiles = existsSync(states) ? readdirSync(states).flatMap((s) => (existsSync(join(states, s, 'sessions')) ? readdirSync(join(states, s, 'sessions')) : [])) : [];
    expect(stateFiles).toEqual([]);
    // The pull's note of a request under way is taken back when it fails: a state pack, if the run's close wrote one,
    // holds no session (its header line only).
    const packs = existsSync(states) ? readdirSync(states).map((s) => join(states, s, 'state-pack.jsonl')).filter((p) => existsSync(p)) : [];
    for (const p of packs) expect(readFileSync(p, 'utf8').split('\n').filter(Boolean).slice(1), `sessions in ${p}`).toEqual([]);

    // The same pull from the real server afterwards creates every session: nothing half-done stood in the way.
    // (The account holds the earlier cases' sessions too: they land under their own folders.)
    expect(await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url: server.url, token: server.token }) })).toMatchObject({ failed: 0 });
    expect(filesOf(desktop.SESSYNC_HOME, cwd).sort()).toEqual(sessions.map((id) => sessionFileName(TS, id)));
  }, 60_000);
});

describe('a new session\'s file written from the pulled bytes', () => {
  it('takes a body as it is only when it is exactly its entries\' lines: a BOM, a blank or a bad line makes it written line by line', async () => {
    const dir = tempDir('sessync-pull-bytes-');
    try {
      const store = new MemoryStore();
      const target = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
      const { token, account } = await adminCreateAccount(target, TEST_ADMIN_SECRET);
      const api = () => new ApiClient({ url: 'http://sessync.test', token, fetch: ((i: RequestInfo | URL, init?: RequestInit) => target.fetch(new Request(i, init))) as typeof fetch, retries: 0 });
      const cwd = join(dir.dir, 'project');
      mkdirSync(cwd, { recursive: true });
      const id = '00000001-pull-bytes';
      writeSession(join(dir.dir, 'laptop', 'sessions'), cwd, id, 2);
      expect(await runSync({ mode: 'push', all: true, cwd, env: { SESSYNC_HOME: join(dir.dir, 'laptop') }, api: api() })).toMatchObject({ failed: 0, pushedEntries: 2 });
      // What an older server may hold from another host: a line behind a BOM, a blank line, a line that is no entry.
      const line = (n: number) => JSON.stringify({ type: 'message', id: `old-${n}`, parentId: null, timestamp: `2026-01-02T00:00:0${n}.000Z`, message: { role: 'user', content: `old ${n}` } });
      // (One batch whose only flaw is the BOM: its lines would otherwise be taken as they are.)
      const bodies = [`\uFEFF${line(1)}\n${line(2)}\n`, `${line(3)}\n\n{"type":"message"}\n`];
      for (const [i, body] of bodies.entries()) {
        const envelope = { session: id, host: 'old', seq: i + 1, batchId: `old-${i + 1}`, entryCount: 2, encoding: 'jsonl', sha256: createHash('sha256').update(body, 'utf8').digest('hex') };
        await store.putIfAbsent(keys.batch(account, id, 'old', i + 1), new TextEncoder().encode(JSON.stringify({ envelope, body })));
      }
      await store.putIfAbsent(keys.head(account, id, 'old', 2), new Uint8Array(0));

      const desktop = { SESSYNC_HOME: join(dir.dir, 'desktop') };
      const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: api() });
      expect(pull).toMatchObject({ failed: 0, createdSessions: 1, pulledEntries: 4, skippedLines: 2 });
      const file = join(projectDir(join(desktop.SESSYNC_HOME, 'sessions'), cwd), sessionFileName(TS, id));
      const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
      // Every line of the file is JSON (the BOM line was not written as its bytes), and only the entries are there.
      expect(lines.map((l) => (JSON.parse(l) as { id: string }).id).sort()).toEqual([id, '00000001-0', '00000001-1', 'old-2', 'old-3'].sort());
    } finally {
      dir.cleanup();
    }
  }, 60_000);
});
