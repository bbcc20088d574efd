// `sessync serve` after its saved token was revoked: the next start issues a new token for the same account.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalServer } from '../../worker/local-server.js';
import { tempDir } from '../helpers/cli.js';

async function whoami(url: string, token: string): Promise<{ status: number; account?: string }> {
  const r = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  return { status: r.status, ...(r.ok ? { account: ((await r.json()) as { account: string }).account } : {}) };
}

describe('local server credentials', () => {
  it('a revoked first token is replaced on restart by a new token of the same account, not a new empty account', async () => {
    const dir = tempDir('sessync-serve-revoked-');
    const dataDir = join(dir.dir, 'data');
    try {
      const a = await startLocalServer({ port: 0, dataDir, host: '127.0.0.1' });
      const revoke = await fetch(`${a.url}/v1/tokens/current`, { method: 'DELETE', headers: { authorization: `Bearer ${a.token}` } });
      expect(revoke.status).toBe(200);
      await a.close();
      const b = await startLocalServer({ port: 0, dataDir, host: '127.0.0.1' });
      try {
        expect(b.token).not.toBe(a.token);
        expect(b.account).toBe(a.account);
        expect(await whoami(b.url, b.token)).toEqual({ status: 200, account: a.account });
        expect((await whoami(b.url, a.token)).status).toBe(401);
      } finally {
        await b.close();
      }
    } finally {
      dir.cleanup();
    }
  });
});
