// Issue 9 defect 10: the admin secret's minimum, on every runtime path (createApp, the Workers binding), and what passes it.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSessyncError } from '../../shared/errors.js';
import { adminSecretProblem } from '../../worker/admin-secret.js';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { TEST_ADMIN_SECRET, TestClient, appFetcher } from './routes-helpers.js';

describe('admin secret minimum', () => {
  it.each([
    ['x', /has 1 characters; it needs at least 32/],
    ['a-31-character-secret-is-short!', /at least 32/],
    ['a'.repeat(40), /does not look random/],
    ['password'.repeat(4), /does not look random/],
    ['0123456789'.repeat(4), /does not look random/],
    ['x'.repeat(24) + 'abcdefghij', /does not look random/],
  ])('refuses %j', (secret, why) => {
    expect(adminSecretProblem(secret)).toMatch(why);
    expect(adminSecretProblem(secret)).toContain('openssl rand -base64 32');
    let thrown: unknown;
    try {
      createApp({ store: new MemoryStore(), adminSecret: secret });
    } catch (e) {
      thrown = e;
    }
    expect(isSessyncError(thrown, 'bad_input')).toBe(true);
  });

  it('accepts what openssl rand -base64 32, -hex 16 and the local server generate', () => {
    for (let i = 0; i < 2000; i++) {
      for (const s of [randomBytes(32).toString('base64'), randomBytes(16).toString('hex'), randomBytes(32).toString('base64url')]) expect(adminSecretProblem(s), s).toBeNull();
    }
    expect(adminSecretProblem(TEST_ADMIN_SECRET)).toBeNull();
  });

  it('a weak SESSYNC_ADMIN_SECRET binding (Workers: no start to refuse) keeps the admin API shut with 403', async () => {
    const f = appFetcher(createApp({ store: new MemoryStore() }), { SESSYNC_ADMIN_SECRET: 'short' });
    const r = await new TestClient(f, 'short').call('POST', '/v1/admin/accounts');
    expect(r.status).toBe(403);
    expect(r.json.error.message).toMatch(/admin API is disabled: .*at least 32.*openssl rand -base64 32/);
  });
});
