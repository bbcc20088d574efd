// Session file names built from a header timestamp that may come from another machine: one flat, listable file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { idFromFileName, projectDir, sessionFileName } from '../../cli/store/paths.js';
import { cliEnv } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

const ID = '0192f3a4-5b6c-7d8e-9f00-112233445566';

describe('sessionFileName', () => {
  it('keeps pi\'s name for an ISO timestamp', () => {
    expect(sessionFileName('2026-11-30T14:54:55.123Z', ID)).toBe(`2026-11-30T14-54-55-123Z_${ID}.jsonl`);
    expect(sessionFileName('2026-11-30T14:54:55.123+02:00', ID)).toBe(`2026-11-30T14-54-55-123-02-00_${ID}.jsonl`);
  });

  const foreign = ['2026/11/30 14:54', '..\\..\\evil', '../../../etc/passwd', 'a_b_c', 'spaces and\nnewline', 'é☃\u0000', 'x'.repeat(400)];
  for (const ts of foreign) {
    it(`makes a flat, safe name from ${JSON.stringify(ts.slice(0, 30))}`, () => {
      const name = sessionFileName(ts, ID);
      expect(name).toMatch(/^[A-Za-z0-9-]*_[A-Za-z0-9-]+\.jsonl$/);
      expect(name.length).toBeLessThan(255);
      expect(dirname(join('/root/project', name))).toBe('/root/project');
      expect(idFromFileName(name)).toBe(ID);
    });
  }
});

describe('a session whose header timestamp holds path separators', () => {
  let t: CliEnv;
  beforeEach(() => {
    t = cliEnv();
  });
  afterEach(() => t.cleanup());

  it('is written as one file in the project folder and shows up in list', async () => {
    const header = { type: 'session', version: 3, id: ID, timestamp: '2026/11/30 14:54 \\ other machine', cwd: t.project };
    const dir = projectDir(t.root, t.project);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, sessionFileName(header.timestamp, ID)), JSON.stringify(header) + '\n');
    expect(readdirSync(dir)).toEqual([`2026-11-30-14-54---other-machine_${ID}.jsonl`]);
    const listed = await t.json(['list']);
    expect(JSON.stringify(listed)).toContain(ID);
  });
});
