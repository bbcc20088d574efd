// A frames pull answer from a real server in small HTTP chunks (bodies across chunk boundaries) reads whole, and a
// connection dropped midway through it is a retryable error with nothing written.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { isSessyncError } from '../../shared/errors.js';
import { useServer } from './helpers.js';
import { writeSession } from './session-files.js';

const TS = '2026-01-01T00:00:00.000Z';

/** Session files of `home` for `cwd`, by name. */
function filesOf(home: string, cwd: string): string[] {
  const dir = projectDir(join(home, 'sessions'), cwd);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort() : [];
}

describe('a frames answer in small HTTP chunks from a real server', () => {
  const ctx = useServer(undefined, 'sessync-pull-chunks-');
  let proxy: Server;
  let url = '';
  /** How the proxy sends a frames answer of POST /v1/pulls: in chunks of this many bytes, then (drop) hangs up at half. */
  let mode = { size: 0, drop: false };
  let written = 0;

  beforeAll(async () => {
    // Between client and the real server: passes each request on, and sends a frames answer back as chunked
    // transfer coding in pieces of `mode.size` bytes (each write is its own HTTP chunk, so its own 'data' on the client).
    proxy = createServer((req, res: ServerResponse) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k))) as Record<string, string>;
        const up = await fetch(ctx.server.url + req.url, { method: req.method!, headers, ...(parts.length ? { body: Buffer.concat(parts) } : {}) });
        const body = Buffer.from(await up.arrayBuffer());
        const type = up.headers.get('content-type') ?? '';
        if (mode.size === 0 || req.url !== '/v1/pulls' || type !== FRAMES_TYPE) {
          res.writeHead(up.status, { 'content-type': type, 'content-length': body.length });
          res.end(body);
          return;
        }
        res.writeHead(up.status, { 'content-type': type });
        written = 0;
        const stop = mode.drop ? body.length >> 1 : body.length;
        for (let at = 0; at < stop; at += mode.size) {
          res.write(body.subarray(at, Math.min(stop, at + mode.size)));
          written++;
        }
        if (mode.drop) res.socket?.destroySoon();
        else res.end();
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

  /** Three sessions pushed from a laptop of their own to the real server; the desktop pulls them through the proxy. */
  async function pushed(tag: string): Promise<{ cwd: string; laptop: string; desktop: { SESSYNC_HOME: string }; ids: string[] }> {
    const { server, root } = ctx;
    const cwd = join(root, `chunks-${tag}`);
    mkdirSync(cwd, { recursive: true });
    const laptop = join(root, `laptop-${tag}`);
    const ids = [1, 2, 3].map((n) => `${tag.padStart(4, '0')}000${n}-chunks`);
    for (const [i, id] of ids.entries()) writeSession(join(laptop, 'sessions'), cwd, id, 2 + i);
    expect(await runSync({ mode: 'push', all: true, cwd, env: { SESSYNC_HOME: laptop }, api: new ApiClient({ url: server.url, token: server.token }) })).toMatchObject({ failed: 0, pushedSessions: 3 });
    return { cwd, laptop, desktop: { SESSYNC_HOME: join(root, `desktop-${tag}`) }, ids };
  }

  it.each([1, 7, 100, 4096])('in chunks of %i bytes: every session written as pushed', async (size) => {
    const { cwd, laptop, desktop, ids } = await pushed(String(size));
    mode = { size, drop: false };
    const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url, token: ctx.server.token, retries: 0 }) });
    mode = { size: 0, drop: false };
    expect(written).toBeGreaterThan(size === 4096 ? 1 : 10);
    // (The account holds the earlier cases' sessions too: they land under their own folders.)
    expect(pull).toMatchObject({ failed: 0 });
    expect(filesOf(desktop.SESSYNC_HOME, cwd)).toEqual(ids.map((id) => sessionFileName(TS, id)).sort());
    for (const id of ids) {
      const name = sessionFileName(TS, id);
      expect(readFileSync(join(projectDir(join(desktop.SESSYNC_HOME, 'sessions'), cwd), name), 'utf8'), id).toBe(readFileSync(join(projectDir(join(laptop, 'sessions'), cwd), name), 'utf8'));
    }
  }, 60_000);

  it('a connection dropped midway through the answer: a retryable error, nothing written', async () => {
    const { cwd, desktop, ids } = await pushed('drop');
    mode = { size: 50, drop: true };
    let err: unknown;
    try {
      await new ApiClient({ url, token: ctx.server.token, retries: 0 }).pullPages(ids.map((session) => ({ session, cursor: {} })));
    } catch (e) {
      err = e;
    }
    expect(written).toBeGreaterThan(1);
    expect(isSessyncError(err, 'unavailable'), String(err)).toBe(true);
    expect((err as { retryable?: boolean }).retryable).toBe(true);
    // The whole sync: it stops on the error (retries: 0) having written no session file from the half it got.
    let syncErr: unknown;
    try {
      await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url, token: ctx.server.token, retries: 0 }) });
    } catch (e) {
      syncErr = e;
    } finally {
      mode = { size: 0, drop: false };
    }
    expect(isSessyncError(syncErr, 'unavailable'), String(syncErr)).toBe(true);
    expect(filesOf(desktop.SESSYNC_HOME, cwd)).toEqual([]);
  }, 60_000);
});
