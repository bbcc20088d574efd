// Suites that run inside workerd through the Workers Vitest pool (R2 binding, routes).
import { defineConfig } from 'vitest/config';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: { bindings: { SESSYNC_ADMIN_SECRET: 'test-admin-secret' } },
    }),
  ],
  test: {
    name: 'workers',
    include: ['test/workers/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
