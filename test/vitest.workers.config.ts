// Suites that run inside workerd through the Workers Vitest pool (R2 binding, routes).
import { defineConfig } from 'vitest/config';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_SECRET } from './worker/routes-helpers.js';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: { bindings: { SESSYNC_ADMIN_SECRET: TEST_ADMIN_SECRET } },
    }),
  ],
  test: {
    name: 'workers',
    include: ['test/workers/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
