// The api client on node:http (no fetch given): pushes of many chunks stored once, retries, timeouts, dropped answers, kept-alive connections the server closed, redirects and compressed answers.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { isSessyncError } from '../../shared/errors.js';
import { makeBatch, metaFor } from '../worker/routes-helpers.js';
import { startNodeServer, useServer } from './helpers.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A local server whose handler sees each request with its whole body; its URL. */
function serve(handler: Handler, opts: { keepAliveTimeout?: number } = {}): Promise<{ url: string; server: Server }> {
  const s = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(parts)));
  });
  if (opts.keepAliveTimeout !== undefined) s.keepAliveTimeout = opts.keepAliveTimeout;
  servers.push(s);
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r({ url: `http://127.0.0.1:${(s.address() as { port: number }).port}`, server: s })));
}

/** Forwards a request (with the body already read) to the real server, and its answer back. */
function forward(target: string, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const out = request(target + req.url, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  out.end(body);
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

const health = { service: 'sessync', api: 1 };

const big = (session: string) =>
  makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session), lines: Array.from({ length: 100 }, (_, i) => ({ type: 'message', id: `${session}-${i}`, parentId: i ? `${session}-${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'x'.repeat(1000) } })) });

describe('ApiClient on node:http, against the Node server', () => {
  const rig = useServer(startNodeServer, 'sessync-node-http-');

  it('a push of many batches in one request is stored once, with its Content-Length; a 503 in between is retried with the same bytes', async () => {
    const seen: { length: number; declared: string | undefined; type: string | undefined; body: Buffer }[] = [];
    const proxy = await serve((req, res, body) => {
      if (req.url === '/v1/batches') {
        seen.push({ length: body.byteLength, declared: req.headers['content-length'], type: req.headers['content-type'], body });
        if (seen.length === 1) return json(res, 503, { error: { code: 'unavailable', message: 'busy', retryable: true } });
      }
      forward(rig.server.url, req, res, body);
    });
    const api = new ApiClient({ url: proxy.url, token: rig.server.token, baseDelayMs: 1, maxDelayMs: 1 });
    const items = await Promise.all(['nh1', 'nh2', 'nh3'].map(big));
    const r = await api.pushBatches(items);
    expect(r.results.map((x) => x.ok && x.status)).toEqual(['created', 'created', 'created']);
    expect(seen).toHaveLength(2);
    expect(seen[0]!.length).toBeGreaterThan(256 * 1024);
    for (const s of seen) {
      expect(Number(s.declared)).toBe(s.length);
      expect(s.type).toBe('application/vnd.sessync.frames');
    }
    expect(seen[1]!.body.equals(seen[0]!.body)).toBe(true);
    expect(api.bytesSent).toBe(2 * seen[0]!.length);
    const again = await api.pushBatches(items);
    expect(again.results.map((x) => x.ok && x.status)).toEqual(['exists', 'exists', 'exists']);
  }, 60_000);

  it('a small push and the JSON calls go the same way', async () => {
    const api = new ApiClient({ url: rig.server.url, token: rig.server.token });
    expect(await api.health()).toMatchObject(health);
    const r = await api.pushBatch(await makeBatch({ session: 'nh-small', host: 'h1', seq: 1, meta: metaFor('nh-small') }));
    expect(r.status).toBe('created');
    expect((await api.sessionMeta('nh-small')).hosts).toEqual({ h1: 1 });
  }, 60_000);
});

describe('ApiClient on node:http: failures keep their meaning', () => {
  it('an answer that never comes ends at the timeout, as a retryable unavailable', async () => {
    const { url } = await serve(() => {}); // never answers
    const api = new ApiClient({ url, retries: 0, timeoutMs: 200 });
    const err = await api.health().catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable') && err.retryable).toBe(true);
    expect((err as Error).message).toMatch(/cannot reach the sessync server .*aborted/);
  });

  it('an answer cut off halfway is a dropped read, retried, and the retry succeeds', async () => {
    let n = 0;
    const { url } = await serve((_req, res) => {
      if (++n === 1) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"service":');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      json(res, 200, health);
    });
    const retries: string[] = [];
    const api = new ApiClient({ url, baseDelayMs: 1, maxDelayMs: 1, onRetry: (e) => retries.push(e.message) });
    expect(await api.health()).toEqual(health);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(/dropped while reading the answer/);
  });

  it('a kept-alive connection the server drops as it is reused: the request goes again on a new one, with no retry wait', async () => {
    const served = new Set<unknown>();
    let dropped = 0;
    const { url } = await serve((req, res) => {
      if (served.has(req.socket)) {
        // The server's idle timeout fired just as the client reused the connection: closed, unanswered.
        dropped++;
        req.socket.destroy();
        return;
      }
      served.add(req.socket);
      json(res, 200, health, { 'keep-alive': 'timeout=60' });
    });
    const retries: string[] = [];
    const api = new ApiClient({ url, retries: 0, onRetry: (e) => retries.push(e.message) });
    await api.health();
    expect(await api.health()).toEqual(health);
    expect(dropped).toBe(1);
    expect(served.size).toBe(2);
    expect(retries).toEqual([]);
  });

  it('a GET follows any redirect; a POST follows 307 and 308 with its body, and gets a 301, 302 or 303 as an answer', async () => {
    const bodies: string[] = [];
    const target = await serve((req, res, body) => {
      if (req.method === 'POST') bodies.push(body.toString('utf8'));
      if (req.url === '/v1/health') return json(res, 200, health);
      json(res, 200, { account: 'a', id: 'tok_1', name: 'x', created: '2026-01-01T00:00:00.000Z', token: 'sst_x' });
    });
    let status = 308;
    const { url } = await serve((req, res) => {
      res.writeHead(status, { location: target.url + req.url });
      res.end();
    });
    const api = new ApiClient({ url, token: 't', retries: 0 });
    expect(await api.health()).toEqual(health);
    for (status of [307, 308]) {
      bodies.length = 0;
      await api.createToken('x').catch((e: unknown) => {
        throw new Error(`${status}: ${(e as Error).message}`);
      });
      expect(bodies.length).toBe(1);
      expect(JSON.parse(bodies[0]!)).toMatchObject({ name: 'x' });
    }
    for (status of [301, 302, 303]) {
      bodies.length = 0;
      const err = await api.createToken('x').catch((e: unknown) => e);
      expect(isSessyncError(err, 'wrong_server')).toBe(true);
      expect((err as Error).message).toMatch(new RegExp(`HTTP ${status}`));
      expect(bodies).toEqual([]);
    }
  });

  it('a redirect to another origin does not carry the token on; one within the origin does', async () => {
    const seen: { url: string | undefined; auth: string | undefined }[] = [];
    const other = await serve((req, res) => {
      seen.push({ url: req.url, auth: req.headers.authorization });
      json(res, 200, { tokens: [] });
    });
    const { url } = await serve((req, res) => {
      if (req.url === '/v1/tokens') {
        res.writeHead(302, { location: '/moved/v1/tokens' });
        return res.end();
      }
      if (req.url === '/moved/v1/tokens') {
        seen.push({ url: req.url, auth: req.headers.authorization });
        res.writeHead(307, { location: other.url + '/v1/tokens' });
        return res.end();
      }
      json(res, 404, {});
    });
    await new ApiClient({ url, token: 'SECRET-TOKEN', retries: 0 }).listTokens();
    expect(seen).toEqual([
      { url: '/moved/v1/tokens', auth: 'Bearer SECRET-TOKEN' },
      { url: '/v1/tokens', auth: undefined },
    ]);
  });

  it('asks for compressed answers and names itself, as fetch did', async () => {
    let headers: IncomingMessage['headers'] = {};
    const { url } = await serve((req, res) => {
      headers = req.headers;
      json(res, 200, health);
    });
    await new ApiClient({ url }).health();
    expect(headers['accept-encoding']).toMatch(/gzip/);
    expect(headers['user-agent']).toMatch(/^sessync\/\d+\.\d+/);
  });

  it('a compressed answer is read as its text', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify(health)));
    });
    expect(await new ApiClient({ url }).health()).toEqual(health);
  });

  it('a port nobody listens on keeps its code (ECONNREFUSED)', async () => {
    const { url, server } = await serve(() => {});
    await new Promise((r) => server.close(r));
    servers.length = 0;
    const err = await new ApiClient({ url, retries: 0 }).health().catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable')).toBe(true);
    expect((err as { details: { reason: string } }).details.reason).toBe('ECONNREFUSED');
  });
});
