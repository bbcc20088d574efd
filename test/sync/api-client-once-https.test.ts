// Once-only requests over https (the real CLI, a throwaway self-signed certificate): retried only when the connection closed before TLS completed.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { cliEnv, type CliEnv } from '../cli/cli-env.js';
import { startNodeRig, type NodeRig } from '../worker/node-rig.js';
import { forwardTo } from './forwarding-proxy.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const OPENSSL = hasOpenssl();

/** What the https front does to the next connections and requests; the test sets it, the front counts down. */
interface Plan {
  /** Connections to close on their first bytes (the TLS ClientHello): before the handshake completes. */
  closeBeforeHandshake: number;
  /** Requests ("METHOD /path") whose answer is read from the server and then lost: the connection is dropped. */
  dropAfterAnswer: Set<string>;
}

/**
 * An https front for the real server on one port: raw TCP first, so a connection can be closed before TLS completes;
 * the rest are handed to an https server that passes each request on to `upstream` (plain http).
 */
async function httpsFront(upstream: string, cert: string, key: string) {
  const plan: Plan = { closeBeforeHandshake: 0, dropAfterAnswer: new Set() };
  const forwarded: string[] = [];
  let closedEarly = 0;
  const tls = createHttpsServer({ cert, key }, forwardTo(upstream, forwarded, (method, url) => plan.dropAfterAnswer.delete(`${method} ${url}`)));
  const sockets = new Set<Socket>();
  const front = createNetServer((sock) => {
    sockets.add(sock);
    sock.once('close', () => sockets.delete(sock));
    if (plan.closeBeforeHandshake > 0) {
      plan.closeBeforeHandshake--;
      sock.once('data', () => {
        closedEarly++;
        sock.destroy();
      });
      return;
    }
    tls.emit('connection', sock);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  return {
    url: `https://127.0.0.1:${(front.address() as { port: number }).port}`,
    plan,
    forwarded,
    closedEarly: () => closedEarly,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        tls.close();
        front.close(() => r());
      }),
  };
}

describe.skipIf(!OPENSSL)('once-only requests over https (skipped when `openssl` is not on PATH: it makes the throwaway certificate)', () => {
  let rig: NodeRig;
  let front: Awaited<ReturnType<typeof httpsFront>>;
  let t: CliEnv;
  let certs: { dir: string; cleanup: () => void };
  let trust: Record<string, string>;

  beforeAll(async () => {
    // A key and certificate made for this run only, never kept: the CLI trusts it through NODE_EXTRA_CA_CERTS.
    certs = tempDir('sessync-tls-');
    const key = join(certs.dir, 'key.pem');
    const cert = join(certs.dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    rig = await startNodeRig();
    front = await httpsFront(rig.url, readFileSync(cert, 'utf8'), readFileSync(key, 'utf8'));
    trust = { NODE_EXTRA_CA_CERTS: cert };
    t = cliEnv();
    const login = await t.run(['login', front.url, '--token', rig.alice.token!, '--no-encrypt'], '', trust);
    expect(login.code, login.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    t?.cleanup();
    await front?.close();
    await rig?.close();
    certs?.cleanup();
  });

  async function tokenNames(): Promise<(string | undefined)[]> {
    const r = await rig.alice.call('GET', '/v1/tokens');
    expect(r.status).toBe(200);
    return (r.json.tokens as { name?: string }[]).map((x) => x.name);
  }

  async function newShare(): Promise<{ id: string; token: string }> {
    const r = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
    expect(r.status, r.text).toBe(201);
    return r.json;
  }

  const blob = async (token: string) => (await fetch(`${rig.url}/v1/shares/${token}/blob`)).status;

  describe('the first connection closed before the TLS handshake completed (nothing can have reached the server)', () => {
    it('POST /v1/tokens is sent again and makes one token', async () => {
      front.forwarded.length = 0;
      const early = front.closedEarly();
      front.plan.closeBeforeHandshake = 1;
      const r = await t.run(['tokens', 'new', '--name', 'https-early', '--json'], '', trust);
      expect(r.code, r.stderr).toBe(0);
      expect(front.closedEarly()).toBe(early + 1);
      expect(front.forwarded).toEqual(['POST /v1/tokens']);
      expect((await tokenNames()).filter((n) => n === 'https-early')).toHaveLength(1);
    });

    it('DELETE /v1/shares/:id is sent again and revokes the share', async () => {
      const s = await newShare();
      front.forwarded.length = 0;
      const early = front.closedEarly();
      front.plan.closeBeforeHandshake = 1;
      const r = await t.run(['unshare', s.id, '--json'], '', trust);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ revoked: true, id: s.id });
      expect(front.closedEarly()).toBe(early + 1);
      expect(front.forwarded).toEqual([`DELETE /v1/shares/${s.id}`]);
      expect(await blob(s.token)).toBe(410);
    });
  });

  describe('the connection dropped after the server acted', () => {
    it('POST /v1/tokens is not sent again: one token, and an error that says it may have been made and how to check', async () => {
      front.forwarded.length = 0;
      front.plan.dropAfterAnswer.add('POST /v1/tokens');
      const r = await t.run(['tokens', 'new', '--name', 'https-dropped'], '', trust);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/lost the connection to the sessync server at https:\/\/127\.0\.0\.1:\d+ .*the request to create a token was sent, so the server may have done it: run `sessync tokens`/);
      expect(r.stderr).not.toMatch(/check the URL|server is running/);
      expect(front.forwarded).toEqual(['POST /v1/tokens']);
      expect((await tokenNames()).filter((n) => n === 'https-dropped')).toHaveLength(1);
    });

    it('DELETE /v1/shares/:id is not sent again: revoked, and the error says it may have been', async () => {
      const s = await newShare();
      front.forwarded.length = 0;
      front.plan.dropAfterAnswer.add(`DELETE /v1/shares/${s.id}`);
      const r = await t.run(['unshare', s.id], '', trust);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/the request to revoke the share was sent, so the server may have done it: run `sessync shares`/);
      expect(front.forwarded).toEqual([`DELETE /v1/shares/${s.id}`]);
      expect(await blob(s.token)).toBe(410);
    });
  });
});
