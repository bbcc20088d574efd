// Issue 9 defects 7-8 on the real Node server: share tokens never reach a log or an answer's storage detail; the page's status tells.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { sha256Hex } from '../../worker/sha256.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import type { FsStore } from '../../worker/store/fs-store.js';
import { startNodeRig, type NodeRig } from './node-rig.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const inADay = () => new Date(Date.now() + 24 * 3600 * 1000).toISOString();

/**
 * Fault injector around the real file store: reads of share records fail while `failing` is set,
 * the way a broken disk or bucket would (a SessyncError naming the key, or a plain Error).
 */
class FailingShareReads implements BlobStore {
  failing: 'sessync' | 'plain' | null = null;
  constructor(private readonly inner: FsStore) {}
  async get(key: string) {
    if (this.failing && key.startsWith('shares/')) {
      if (this.failing === 'plain') throw new Error(`EIO reading ${key}`);
      throw new SessyncError('unavailable', `file store: get ${key} failed: EIO`, { retryable: true });
    }
    return this.inner.get(key);
  }
  putIfAbsent(key: string, body: Uint8Array) {
    return this.inner.putIfAbsent(key, body);
  }
  put(key: string, body: Uint8Array) {
    return this.inner.put(key, body);
  }
  list(opts?: Parameters<BlobStore['list']>[0]) {
    return this.inner.list(opts);
  }
  delete(key: string) {
    return this.inner.delete(key);
  }
}

let rig: NodeRig;
let faults: FailingShareReads;

async function createShare(): Promise<{ token: string; id: string }> {
  const r = await rig.alice.call('POST', '/v1/shares', { ciphertext: 'AAAA', expiresAt: inADay() });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

beforeAll(async () => {
  rig = await startNodeRig((fs) => (faults = new FailingShareReads(fs)));
});
afterAll(() => rig?.close());

describe('defect 7: share tokens stay out of logs, storage keys out of answers', () => {
  it.each(['sessync', 'plain'] as const)('a %s storage fault on each share route: 5xx, no token in the log, no key in the body', async (kind) => {
    const { token } = await createShare();
    const key = keys.share(await sha256Hex(token));
    const logged: string[] = [];
    const capture = (...args: unknown[]) => void logged.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '));
    const error = vi.spyOn(console, 'error').mockImplementation(capture);
    const warn = vi.spyOn(console, 'warn').mockImplementation(capture);
    faults.failing = kind;
    try {
      for (const [method, path] of [['GET', `/v1/shares/${token}/blob`], ['GET', `/s/${token}`], ['DELETE', `/v1/shares/${token}`]] as const) {
        const r = await rig.alice.call(method, path);
        expect(r.status, `${method} ${path}`).toBeGreaterThanOrEqual(500);
        expect(r.json.error.message).toMatch(/server log has details/);
        expect(r.text).not.toContain(key);
        expect(r.text).not.toContain('shares/');
        expect(r.text).not.toContain(token);
      }
    } finally {
      faults.failing = null;
      error.mockRestore();
      warn.mockRestore();
    }
    expect(logged.length).toBeGreaterThanOrEqual(3);
    for (const line of logged) expect(line).not.toContain(token);
    expect(logged.join('\n')).toContain('/v1/shares/<token>/blob');
  });
});

describe('defect 8: the share page answers 404 or 410 for links that do not work, with the same page', () => {
  it('live 200, revoked 410, expired 410, unknown and malformed 404; the assets stay 200', async () => {
    const live = await createShare();
    const revoked = await createShare();
    expect((await rig.alice.call('DELETE', `/v1/shares/${revoked.id}`)).status).toBe(200);
    // An expired share: its record as the server keeps it, with an expiry already past.
    const expired = await createShare();
    const key = keys.share(await sha256Hex(expired.token));
    const rec = JSON.parse(dec.decode((await rig.fs.get(key))!.body));
    await rig.fs.put(key, enc.encode(JSON.stringify({ ...rec, expiresAt: '2020-01-01T00:00:00.000Z' })));

    const page = async (path: string) => {
      const res = await fetch(rig.url + path);
      return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
    };
    const ok = await page(`/s/${live.token}`);
    expect(ok.status).toBe(200);
    for (const [path, status] of [[`/s/${revoked.token}`, 410], [`/s/${expired.token}`, 410], [`/s/${'C'.repeat(43)}`, 404], ['/s/short', 404]] as const) {
      const p = await page(path);
      expect(p.status, path).toBe(status);
      expect(p.text, path).toBe(ok.text); // the page's script shows the clear message from the blob route
      expect(p.type).toMatch(/^text\/html/);
    }
    expect((await page('/s/assets/viewer.js')).status).toBe(200);
    expect((await page('/s/assets/viewer.css')).status).toBe(200);
    // The blob route says why, for the page to show.
    expect((await rig.alice.call('GET', `/v1/shares/${expired.token}/blob`)).json.error.message).toMatch(/expired at 2020-01-01/);
  });
});
