// Share routes inside workerd: the real Workers entry (exports.default.fetch) on the R2 binding, with client-side crypto run in workerd.
import { env, exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { CreateShareResponseSchema, ErrorBodySchema, ListSharesResponseSchema, ShareBlobResponseSchema } from '../../shared/wire.js';
import { SHARE_TOKEN_RE, decryptShare, encryptShare, newShareKey } from '../../shared/share-crypto.js';
import { sha256Hex } from '../../worker/sha256.js';
import { keys } from '../../shared/keys.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, type Fetcher } from '../worker/routes-helpers.js';

// Set in test/vitest.workers.config.ts as a miniflare binding.
const ADMIN = TEST_ADMIN_SECRET;

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };
const bucket = (env as unknown as { BUCKET: R2Bucket }).BUCKET;
const anon = new TestClient(worker);

let alice: TestClient;
let aliceAccount: string;
let bob: TestClient;

const inDays = (d: number) => new Date(Date.now() + d * 24 * 3600 * 1000).toISOString();

/** Every object in the bucket with its body as latin1 text, so any byte sequence can be searched. */
async function bucketObjects(): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await bucket.list({ ...(cursor ? { cursor } : {}) });
    for (const o of page.objects) {
      const obj = await bucket.get(o.key);
      if (!obj) throw new Error(`listed object ${o.key} vanished before it could be read`);
      const bytes = new Uint8Array(await obj.arrayBuffer());
      let text = '';
      for (const b of bytes) text += String.fromCharCode(b);
      out.push({ key: o.key, text });
    }
    if (!page.truncated) return out;
    cursor = page.cursor;
  }
}

/** Encrypts `payload` with a fresh key in workerd and creates a share of it as `client`. */
async function share(client: TestClient, payload: string, expiresAt = inDays(7)) {
  const key = newShareKey();
  const ciphertext = await encryptShare(new TextEncoder().encode(payload), key);
  const r = await client.call('POST', '/v1/shares', { ciphertext, expiresAt, session: 'sess-1', entryCount: 2 });
  expect(r.status, r.text).toBe(201);
  return { key, ciphertext, created: CreateShareResponseSchema.parse(r.json) };
}

beforeAll(async () => {
  const a = await adminCreateAccount(worker, ADMIN);
  aliceAccount = a.account;
  alice = new TestClient(worker, a.token);
  bob = new TestClient(worker, (await adminCreateAccount(worker, ADMIN)).token);
});

describe('share routes in workerd on R2', () => {
  it('create, fetch without auth and decrypt in workerd back to the same payload', async () => {
    const payload = JSON.stringify({ entries: [{ type: 'message', text: 'hello from a share ✓' }] });
    const { key, ciphertext, created } = await share(alice, payload);
    expect(created.token).toMatch(SHARE_TOKEN_RE);
    expect(created.url).toBe(`http://sessync.test/s/${created.token}`);
    const r = await anon.call('GET', `/v1/shares/${created.token}/blob`);
    expect(r.status, r.text).toBe(200);
    const blob = ShareBlobResponseSchema.parse(r.json);
    expect(blob.ciphertext).toBe(ciphertext);
    expect(blob.id).toBe(created.id);
    expect(new TextDecoder().decode(await decryptShare(blob.ciphertext, key))).toBe(payload);
    // The listing names it by id, never by token.
    const list = ListSharesResponseSchema.parse((await alice.call('GET', '/v1/shares')).json);
    expect(list.shares.map((s) => s.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.token);
  });

  it('the raw token is in no R2 key or body; only its SHA-256 names the record', async () => {
    const { created } = await share(alice, 'token-hiding payload');
    const objects = await bucketObjects();
    expect(objects.map((o) => o.key)).toContain(keys.share(await sha256Hex(created.token)));
    expect(objects.map((o) => o.key)).toContain(keys.accountShare(aliceAccount, created.id));
    for (const o of objects) {
      expect(o.key).not.toContain(created.token);
      expect(o.text, `object ${o.key}`).not.toContain(created.token);
    }
  });

  it('GET /s/:token serves the viewer page with a strict CSP and noindex', async () => {
    const { created } = await share(alice, 'viewer payload');
    const res = await worker.fetch(new Request(`http://sessync.test/s/${created.token}`));
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/https?:/);
    expect(res.headers.get('x-robots-tag')).toContain('noindex');
    expect(html).toMatch(/<meta name="robots" content="noindex/);
    // No inline script (CSP would block it) and no third-party source.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/src="(https?:)?\/\//);
    // The page never embeds the token: it reads it from its own location.
    expect(html).not.toContain(created.token);
  });

  it('DELETE revokes: the blob answers 410 after, R2 keeps no ciphertext, the share leaves the list', async () => {
    const { ciphertext, created } = await share(alice, 'revoke me');
    const del = await alice.call('DELETE', `/v1/shares/${created.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.json).toEqual({ revoked: true, id: created.id });
    const r = await anon.call('GET', `/v1/shares/${created.token}/blob`);
    expect([404, 410]).toContain(r.status);
    expect(ErrorBodySchema.parse(r.json).error.message).toMatch(/revoked/);
    const rec = await bucket.get(keys.share(await sha256Hex(created.token)));
    expect(rec).not.toBeNull();
    expect(await rec!.text()).not.toContain(ciphertext);
    const list = ListSharesResponseSchema.parse((await alice.call('GET', '/v1/shares')).json);
    // A revoked share leaves the list and the account's index.
    expect(list.shares.find((s) => s.id === created.id)).toBeUndefined();
    expect(await bucket.get(keys.accountShare(aliceAccount, created.id))).toBeNull();
  });

  it('revoking by token works the same as by id', async () => {
    const { created } = await share(alice, 'revoke by token');
    expect((await alice.call('DELETE', `/v1/shares/${created.token}`)).status).toBe(200);
    expect([404, 410]).toContain((await anon.call('GET', `/v1/shares/${created.token}/blob`)).status);
  });

  it('another account cannot revoke (404, by id or token) and the share stays readable', async () => {
    const { created } = await share(alice, 'not yours');
    for (const ref of [created.id, created.token]) {
      const r = await bob.call('DELETE', `/v1/shares/${ref}`);
      expect(r.status, r.text).toBe(404);
      expect(ErrorBodySchema.parse(r.json).error.code).toBe('not_found');
    }
    expect((await anon.call('GET', `/v1/shares/${created.token}/blob`)).status).toBe(200);
    const bobs = ListSharesResponseSchema.parse((await bob.call('GET', '/v1/shares')).json);
    expect(bobs.shares.map((s) => s.id)).not.toContain(created.id);
  });

  it('an expiresAt in the past is refused at creation with a 4xx and stores nothing', async () => {
    const before = (await bucketObjects()).map((o) => o.key);
    const ciphertext = await encryptShare(new TextEncoder().encode('too late'), newShareKey());
    const r = await alice.call('POST', '/v1/shares', { ciphertext, expiresAt: new Date(Date.now() - 60_000).toISOString() });
    expect(r.status).toBe(400);
    expect(ErrorBodySchema.parse(r.json).error.message).toMatch(/past/);
    expect((await bucketObjects()).map((o) => o.key)).toEqual(before);
  });

  it('a share whose expiry passes answers 410 after it', async () => {
    const { created } = await share(alice, 'short-lived', new Date(Date.now() + 1500).toISOString());
    expect((await anon.call('GET', `/v1/shares/${created.token}/blob`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2000));
    const r = await anon.call('GET', `/v1/shares/${created.token}/blob`);
    expect([404, 410]).toContain(r.status);
    expect(ErrorBodySchema.parse(r.json).error.message).toMatch(/expired/);
  });

  it('unauthenticated or wrongly authenticated POST /v1/shares is 401 and stores nothing', async () => {
    const before = (await bucketObjects()).map((o) => o.key);
    const ciphertext = await encryptShare(new TextEncoder().encode('anon'), newShareKey());
    for (const client of [anon, new TestClient(worker, 'sst_wrong')]) {
      const r = await client.call('POST', '/v1/shares', { ciphertext, expiresAt: inDays(1) });
      expect(r.status).toBe(401);
    }
    expect((await anon.call('GET', '/v1/shares')).status).toBe(401);
    expect((await bucketObjects()).map((o) => o.key)).toEqual(before);
  });

  it('an unknown or malformed token answers 404 without auth', async () => {
    expect((await anon.call('GET', `/v1/shares/${'A'.repeat(43)}/blob`)).status).toBe(404);
    expect((await anon.call('GET', '/v1/shares/not-a-token/blob')).status).toBe(404);
  });
});
