// cli/bin.mjs compiles nothing: without dist/ it stops with a message saying how to build.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, tempDir } from '../helpers/cli.js';

describe('cli/bin.mjs', () => {
  it('without dist/ it exits 1 with how to build, and writes nothing (no build at run time)', () => {
    const t = tempDir('sessync-launcher-');
    try {
      mkdirSync(join(t.dir, 'cli'));
      copyFileSync(CLI_BIN, join(t.dir, 'cli', 'bin.mjs'));
      const r = spawnSync(process.execPath, [join(t.dir, 'cli', 'bin.mjs'), '--help'], { cwd: t.dir, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('(dist/cli.mjs) is missing');
      expect(r.stderr).toContain('npm run build');
      expect(existsSync(join(t.dir, 'dist'))).toBe(false);
    } finally {
      t.cleanup();
    }
  });
});
