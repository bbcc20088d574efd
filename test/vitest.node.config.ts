// Node-side suites: shared library, CLI, storage backends, end-to-end processes.
import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    name: 'node',
    include: ['test/**/*.test.ts'],
    exclude: ['test/workers/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/setup/build-cli.ts'],
    // Claude Code's folder points nowhere unless a test gives one: the sessions of whoever runs the tests are never
    // read (without --agent, sync commands include Claude Code whenever its folder exists).
    // pi's the same: sessync syncs pi's own folder when it exists.
    env: { CLAUDE_CONFIG_DIR: '/nonexistent/sessync-tests-no-claude', PI_CODING_AGENT_DIR: '/nonexistent/sessync-tests-no-pi', CODEX_HOME: '/nonexistent/sessync-tests-no-codex' },
  },
});
