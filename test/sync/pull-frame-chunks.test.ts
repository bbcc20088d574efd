// A frames pull answer read over the chunks it arrived in: bodies across chunk boundaries in every position read as
// from the joined answer, a cut one is refused, and a connection dropped midway is a retryable error with nothing written.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiClient } from '../../cli/api-client.js';
import { nodeTransport } from '../../cli/http-transport.js';
import { readPullFrames } from '../../cli/sync/pull-frames.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { concatChunks, encodeFrames, FRAMES_TYPE } from '../../shared/batch-frames.js';
import { isSessyncError } from '../../shared/errors.js';
import { useServer } from './helpers.js';
import { writeSession } from './session-files.js';

const TS = '2026-01-01T00:00:00.000Z';
const SESSIONS = ['s-1', 's-2', 's-3'];
const enc = new TextEncoder();

/** A frames answer of three sessions: two batches, none (an end frame alone), and one with an empty body. */
function answer(): Uint8Array {
  const envelope = (session: string, seq: number) => ({ session, host: 'h', seq, batchId: `b${seq}`, entryCount: 1, sha256: 'a'.repeat(64), encoding: 'jsonl' });
  return concatChunks(encodeFrames([
    { header: { session: 's-1', envelope: envelope('s-1', 1), received: 5 }, body: enc.encode('{"type":"message","id":"a"}\n') },
    { header: { session: 's-1', envelope: envelope('s-1', 2) }, body: enc.encode('{"type":"message","id":"bb"}\n{"x":1}\n') },
    { header: { session: 's-1', ok: true, cursor: { h: 2 }, more: false }, body: new Uint8Array(0) },
    { header: { session: 's-2', ok: true, cursor: {}, more: false }, body: new Uint8Array(0) },
    { header: { session: 's-3', envelope: { ...envelope('s-3', 1), entryCount: 0 } }, body: new Uint8Array(0) },
    { header: { session: 's-3', ok: true, cursor: { h: 1 }, more: true }, body: new Uint8Array(0) },
  ]));
}

/** `bytes` cut at `cuts`, each piece in its own buffer, as a socket hands them over. */
function chunked(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.byteLength];
  return at.slice(1).map((end, i) => Uint8Array.from(bytes.subarray(at[i]!, end)));
}

describe('readPullFrames over chunks', () => {
  const whole = answer();
  const expected = readPullFrames(whole, SESSIONS, 'test');

  it('reads every cut into two chunks, one-byte chunks, and random chunkings as the joined answer', () => {
    expect(expected.map((x) => x.ok && x.batches.length)).toEqual([2, 0, 1]);
    for (let p = 1; p < whole.byteLength; p++) expect(readPullFrames(chunked(whole, [p]), SESSIONS, 'test'), `cut at ${p}`).toEqual(expected);
    expect(readPullFrames(chunked(whole, Array.from({ length: whole.byteLength }, (_, i) => i)), SESSIONS, 'test')).toEqual(expected);
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: whole.byteLength - 1 }), { maxLength: 40 }), (cuts) => {
      expect(readPullFrames(chunked(whole, cuts), SESSIONS, 'test')).toEqual(expected);
    }), { numRuns: 500 });
  });

  it('refuses an answer cut short at any byte, however it is chunked', () => {
    for (let n = 0; n < whole.byteLength; n++) {
      const cut = whole.subarray(0, n);
      const chunks = chunked(cut, n > 2 ? [1, n >> 1, n - 1] : []);
      let err: unknown;
      try {
        readPullFrames(chunks, SESSIONS, 'test');
      } catch (e) {
        err = e;
      }
      expect(isSessyncError(err, 'wrong_server'), `cut to ${n} bytes: ${String(err)}`).toBe(true);
    }
  });

  it('gives a body that lies in one chunk as a view of it, and copies one that spans chunks once', () => {
    // The first batch's body ends 10 bytes into the second chunk; the second batch's body lies inside that chunk.
    const firstEnd = Buffer.from(whole).indexOf('{"type":"message","id":"a"}\n') + '{"type":"message","id":"a"}\n'.length;
    const chunks = chunked(whole, [firstEnd - 10]);
    const [s1] = readPullFrames(chunks, SESSIONS, 'test');
    if (!s1?.ok) throw new Error('expected session s-1');
    const [a, b] = s1.batches.map((x) => x.body as Uint8Array);
    expect(a!.buffer).not.toBe(chunks[0]!.buffer);
    expect(a!.buffer).not.toBe(chunks[1]!.buffer);
    expect(new TextDecoder().decode(a)).toBe('{"type":"message","id":"a"}\n');
    expect(b!.buffer).toBe(chunks[1]!.buffer);
  });
});

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
    // The premise: the client's transport gets the answer in as many chunks as the proxy wrote.
    mode = { size, drop: false };
    const res = await nodeTransport(`${url}/v1/pulls`, { method: 'POST', headers: { authorization: `Bearer ${ctx.server.token}`, accept: FRAMES_TYPE, 'content-type': 'application/json' }, body: JSON.stringify({ sessions: ids.map((session) => ({ session, cursor: {} })) }), signal: new AbortController().signal });
    const chunks = await res.chunks!();
    expect(chunks.length).toBe(written);
    expect(written).toBeGreaterThan(size === 4096 ? 0 : 10);

    const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url, token: ctx.server.token, retries: 0 }) });
    mode = { size: 0, drop: false };
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
