// Listing shares follows the server's pages: 45 shares on a real `sessync serve` are all listed, by ApiClient and by `sessync shares`.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { encryptShare, newShareKey } from '../../shared/share-crypto.js';
import { ListSharesResponseSchema } from '../../shared/wire.js';
import { runCli, useServer } from './helpers.js';

const SHARES = 45;

describe('share listing follows pages', () => {
  const ctx = useServer(undefined, 'sessync-shares-page-');

  it(`lists all ${SHARES} shares, more than one page`, async () => {
    const { server } = ctx;
    const client = new ApiClient({ url: server.url, token: server.token, retries: 0 });
    const expiresAt = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
    const made: string[] = [];
    // A few at a time: the machine is shared, and order does not matter here.
    for (let i = 0; i < SHARES; i += 5) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(5, SHARES - i) }, async (_, j) => {
          const ciphertext = await encryptShare(new TextEncoder().encode(`share ${i + j}`), newShareKey());
          return (await client.createShare({ ciphertext, expiresAt, entryCount: i + j })).id;
        }),
      );
      made.push(...batch);
    }
    expect(new Set(made).size).toBe(SHARES);

    // The server really pages: the first raw page is short of all of them and names a next page.
    const raw = await fetch(`${server.url}/v1/shares`, { headers: { authorization: `Bearer ${server.token}` } });
    const first = ListSharesResponseSchema.parse(await raw.json());
    expect(first.shares.length).toBeLessThan(SHARES);
    expect(first.nextPage).toBeDefined();

    const listed = (await client.listShares()).shares;
    expect(listed).toHaveLength(SHARES);
    expect(new Set(listed.map((s) => s.id))).toEqual(new Set(made));

    // The same through the CLI, logged in on its own home.
    const home = join(ctx.root, 'home');
    const env = { HOME: home, SESSYNC_HOME: join(home, '.sessync') };
    const login = await runCli(['login', server.url, '--token', server.token], { env });
    expect(login.code, login.stderr).toBe(0);
    const out = await runCli(['shares', '--json'], { env });
    expect(out.code, out.stderr).toBe(0);
    const { shares } = JSON.parse(out.stdout) as { shares: { id: string }[] };
    expect(shares).toHaveLength(SHARES);
    expect(new Set(shares.map((s) => s.id))).toEqual(new Set(made));
  }, 120_000);
});
