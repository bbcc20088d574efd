// Requests that create or revoke (tokens, shares) reach the server once: a connection dropped after the server acted is not retried.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, normaliseUrl } from '../../cli/api-client.js';
import { isSessyncError } from '../../shared/errors.js';
import { encryptShare, newShareKey } from '../../shared/share-crypto.js';
import { startNodeRig, type NodeRig } from '../worker/node-rig.js';
import { cliEnv } from '../cli/cli-env.js';
import { freePort } from './helpers.js';
import { forwardTo } from './forwarding-proxy.js';

/**
 * A proxy in front of the real server that passes each request on whole, reads the server's whole answer, and then
 * drops the client's connection instead of handing the answer on: the server acted, the client never hears of it.
 */
async function droppingProxy(upstream: string, drops: (method: string, url: string) => boolean = () => true): Promise<{ url: string; forwarded: string[]; close(): Promise<void> }> {
  const forwarded: string[] = [];
  const server: Server = createServer(forwardTo(upstream, forwarded, drops));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

let rig: NodeRig;
let proxy: Awaited<ReturnType<typeof droppingProxy>>;
let token: string;

beforeAll(async () => {
  rig = await startNodeRig();
  proxy = await droppingProxy(rig.url);
  token = rig.alice.token!;
});
afterAll(async () => {
  await proxy.close();
  await rig.close();
});

/** A client through the proxy that would retry a retryable failure 3 times, quickly. */
function viaProxy(): ApiClient {
  return new ApiClient({ url: proxy.url, token, retries: 3, baseDelayMs: 10, maxDelayMs: 20 });
}

async function liveTokens(): Promise<string[]> {
  const r = await rig.alice.call('GET', '/v1/tokens');
  expect(r.status).toBe(200);
  return (r.json.tokens as { id: string }[]).map((t) => t.id);
}

describe('a connection dropped after the server answered', () => {
  it('POST /v1/tokens: sent once, the token made once, and the error says so and how to check', async () => {
    const before = await liveTokens();
    proxy.forwarded.length = 0;
    const err = await viaProxy().createToken('laptop').catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable')).toBe(true);
    expect((err as { retryable: boolean }).retryable).toBe(false);
    expect((err as Error).message).toMatch(/the request to create a token was sent, so the server may have done it: run `sessync tokens`/);
    // It reached a server: "check the URL and that the server is running" would send the user the wrong way.
    expect((err as Error).message).not.toMatch(/check the URL|server is running|cannot reach/);
    expect(proxy.forwarded).toEqual(['POST /v1/tokens']);
    expect((await liveTokens()).length).toBe(before.length + 1);
  });

  it('POST /v1/shares: one share stored, not one per attempt', async () => {
    const ciphertext = await encryptShare(new TextEncoder().encode('shared text'), newShareKey());
    const expiresAt = new Date(Date.now() + 24 * 3600_000).toISOString();
    proxy.forwarded.length = 0;
    const err = await viaProxy().createShare({ ciphertext, expiresAt }).catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable') && !err.retryable).toBe(true);
    expect((err as Error).message).toMatch(/`sessync shares`/);
    expect(proxy.forwarded).toEqual(['POST /v1/shares']);
    const listed = await rig.alice.call('GET', '/v1/shares');
    expect(listed.json.shares).toHaveLength(1);
  });

  it('DELETE /v1/tokens/:id: sent once, so the user hears "may have", never a 404 for the token just revoked', async () => {
    const made = await new ApiClient({ url: rig.url, token }).createToken('to revoke');
    proxy.forwarded.length = 0;
    const err = await viaProxy().revokeToken(made.id).catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable') && !err.retryable).toBe(true);
    expect((err as Error).message).toMatch(/the request to revoke token tok_\w+ was sent/);
    expect(proxy.forwarded).toEqual([`DELETE /v1/tokens/${made.id}`]);
    expect(await liveTokens()).not.toContain(made.id);
  });

  it('an idempotent request (GET /v1/whoami) keeps its retries through the same drops', async () => {
    proxy.forwarded.length = 0;
    const err = await viaProxy().whoami().catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable') && err.retryable).toBe(true);
    expect(proxy.forwarded).toHaveLength(4);
  });
});

describe('a request that surely never reached a server', () => {
  it('POST /v1/tokens to a port nobody listens on is retried (connection refused: no byte was sent)', async () => {
    const port = await freePort();
    const api = new ApiClient({ url: `http://127.0.0.1:${port}`, token, retries: 3, baseDelayMs: 10, maxDelayMs: 20, unreachableRetryMs: 5_000 });
    const err = await api.createToken().catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable') && err.retryable).toBe(true);
    expect((err as { details: { reason: string; notSent?: boolean } }).details).toMatchObject({ reason: 'ECONNREFUSED', notSent: true });
    expect(api.requestCount).toBe(4);
  });
});

/** A server answering every request as a sessync health check, recording each request's Authorization header. */
async function recordingServer(): Promise<{ server: Server; seen: (string | undefined)[] }> {
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ service: 'sessync', api: 1 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, seen };
}

/** What normaliseUrl throws for `url` (it must refuse it, as bad_input). */
function refusal(url: string): Error {
  let err: unknown;
  try {
    normaliseUrl(url);
  } catch (e) {
    err = e;
  }
  expect(isSessyncError(err, 'bad_input')).toBe(true);
  return err as Error;
}

describe('a server URL with a user name or password', () => {
  it('is refused where it is taken, as bad_input naming the token, without echoing the password', () => {
    for (const url of ['http://user:hunter2@127.0.0.1:8787', 'https://user@sessync.example.com/']) {
      const err = refusal(url);
      expect((err as Error).message).toMatch(/must not hold a user name or password.*authenticates with a token/);
      expect((err as Error).message).not.toMatch(/hunter2/);
      expect(() => new ApiClient({ url, token: 'x' })).toThrow(/must not hold a user name or password/);
    }
  });

  it('`sessync login` refuses it before any request, so no Basic auth reaches the server', async () => {
    const { server, seen } = await recordingServer();
    const t = cliEnv();
    try {
      const port = (server.address() as { port: number }).port;
      const r = await t.run(['login', `http://alice:hunter2@127.0.0.1:${port}`, '--token', 'sst_x']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/must not hold a user name or password/);
      expect(r.stderr).not.toMatch(/hunter2/);
      expect(seen).toEqual([]);
    } finally {
      t.cleanup();
      await new Promise((r) => server.close(r));
    }
  });

  it('a redirect to such a URL is not followed: no Basic auth reaches the host it names', async () => {
    const { server: target, seen } = await recordingServer();
    const port = (target.address() as { port: number }).port;
    const redirector = createServer((_req, res) => res.writeHead(307, { location: `http://alice:hunter2@127.0.0.1:${port}/v1/health` }).end());
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
    try {
      const api = new ApiClient({ url: `http://127.0.0.1:${(redirector.address() as { port: number }).port}`, retries: 0 });
      const err = await api.health().catch((e: unknown) => e);
      expect(isSessyncError(err, 'wrong_server')).toBe(true);
      expect((err as Error).message).toMatch(/redirected to a URL with a user name or password .*sessync does not follow it/);
      expect((err as Error).message).not.toMatch(/hunter2/);
      expect(seen).toEqual([]);
    } finally {
      await new Promise((r) => target.close(r));
      await new Promise((r) => redirector.close(r));
    }
  });
});

describe('a once-only request redirected where sessync does not follow', () => {
  for (const [what, location, message] of [
    ['a URL with a user name or password', 'http://alice:hunter2@127.0.0.1:1/v1/tokens', /redirected to a URL with a user name or password \(http:\/\/127\.0\.0\.1:1\/v1\/tokens\); sessync does not follow it/],
    ['another protocol', 'ftp://127.0.0.1:1/v1/tokens', /redirected to a ftp: URL; sessync follows only http and https/],
  ] as const) {
    it(`POST /v1/tokens answered 307 to ${what}: wrong_server, not retryable, sent once (not taken for an unreachable server)`, async () => {
      let posts = 0;
      const redirector = createServer((req, res) => {
        if (req.method === 'POST') posts++;
        req.resume();
        res.writeHead(307, { location }).end();
      });
      await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
      try {
        const api = new ApiClient({ url: `http://127.0.0.1:${(redirector.address() as { port: number }).port}`, token, retries: 3, baseDelayMs: 10, maxDelayMs: 20 });
        const err = await api.createToken('redirected').catch((e: unknown) => e);
        expect(isSessyncError(err, 'wrong_server')).toBe(true);
        expect((err as { retryable: boolean }).retryable).toBe(false);
        expect((err as Error).message).toMatch(message);
        expect((err as Error).message).not.toMatch(/hunter2|alice|cannot reach/);
        expect(posts).toBe(1);
      } finally {
        await new Promise((r) => redirector.close(r));
      }
    });
  }
});

describe('a URL that does not parse', () => {
  it('is echoed without its user name and password', () => {
    for (const url of ['https://alice:hunter2@sessync.example.com:99999', 'alice:hunter2@sessync.example.com:99999', 'https://alice:hun/ter2@sessync.example.com:99999']) {
      const err = refusal(url);
      expect((err as Error).message).toMatch(/"(https:\/\/)?sessync\.example\.com:99999" is not a URL/);
      expect((err as Error).message).not.toMatch(/alice|hunter2|hun|ter2/);
    }
  });
});

describe('`sessync login` when the answer to its POST /v1/tokens is lost', () => {
  it('says what works (log in again, then revoke the extra token by its name), and that advice does work', async () => {
    const lossy = await droppingProxy(rig.url, (method, url) => method === 'POST' && url === '/v1/tokens');
    const t = cliEnv();
    try {
      const before = await liveTokens();
      const r = await t.run(['login', lossy.url, '--token', token, '--name', 'lost-answer', '--no-encrypt']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/nothing was saved: run `sessync login http:\/\/127\.0\.0\.1:\d+` again, then `sessync tokens` lists any token named "lost-answer" that is not current: revoke it/);
      expect(r.stderr).not.toMatch(/check the URL|server is running/);
      expect(lossy.forwarded.filter((x) => x === 'POST /v1/tokens')).toHaveLength(1);
      expect((await liveTokens()).length).toBe(before.length + 1);
      // The advice, followed: `sessync tokens` fails before a login (the reason the old advice did not work), after one it lists the extra token.
      expect((await t.run(['tokens'])).stderr).toMatch(/not logged in/);
      expect((await t.run(['login', rig.url, '--token', token, '--name', 'lost-answer', '--no-encrypt'])).code).toBe(0);
      const listed = (await t.json(['tokens'])).tokens as { id: string; name?: string; current: boolean }[];
      const extra = listed.filter((x) => x.name === 'lost-answer' && !x.current);
      expect(extra).toHaveLength(1);
      expect((await t.run(['tokens', 'revoke', extra[0]!.id])).code).toBe(0);
    } finally {
      t.cleanup();
      await lossy.close();
    }
  });
});
