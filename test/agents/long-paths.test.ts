// A project whose path makes a folder name past 255 bytes: its sessions still get a folder (cut, plus a hash of the path).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectDir } from '../../cli/store/paths.js';
import { runCli, tempDir } from '../helpers/cli.js';

describe('deep project paths', () => {
  const t = tempDir('sessync-long-');
  afterAll(() => t.cleanup());

  it('new and list work in a project whose pi folder name would be over 255 bytes', async () => {
    const deep = join(t.dir, ...Array.from({ length: 7 }, (_, i) => `a-rather-long-folder-name.for_project ${i} 😀`));
    mkdirSync(deep, { recursive: true });
    const env = { SESSYNC_HOME: join(t.dir, 'home') };
    const made = await runCli(['new', '--json', '--cwd', deep], { env });
    expect(made.code, made.stderr).toBe(0);
    const listed = await runCli(['list', '--json', '--cwd', deep], { env });
    expect(listed.json().map((r: { id: string }) => r.id)).toEqual([made.json().id]);
  });

  it('long names are cut to 200 bytes plus a hash; other paths keep the pi name and two long paths stay apart', () => {
    const long = (n: number) => `/x/${'é'.repeat(150)}/${n}`;
    const a = projectDir('/r', long(1)).slice(3);
    const b = projectDir('/r', long(2)).slice(3);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(255);
    expect(a).not.toBe(b);
    expect(projectDir('/r', '/home/me/app')).toBe('/r/--home-me-app--');
  });
});
