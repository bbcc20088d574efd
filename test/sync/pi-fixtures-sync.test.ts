// A copy of ../shared/fixtures/pi-v1 used as a pi session folder syncs to a second machine and resumes there with the same context.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, REPO_ROOT, entrySet, readLog, startNodeServer, useServer } from './helpers.js';

const FIXTURES = join(REPO_ROOT, '..', 'shared', 'fixtures', 'pi-v1');
const present = existsSync(FIXTURES);
if (!present) console.warn(`SKIPPED pi-v1 sync test: ${FIXTURES} is absent (the shared fixtures folder sits beside the repository)`);

describe.skipIf(!present)('pi v1 session folder synced to a second machine', () => {
  const rig = useServer(startNodeServer, 'sessync-pi-');

  it('pushes both v1 files, the second machine gets them in its project folder and resumes with the same context', async () => {
    // pi's layout: <sessions dir>/--<cwd>--/<timestamp>_<id>.jsonl, with the fixtures' original cwd.
    const piDir = join(rig.root, 'pi-sessions');
    const ids: string[] = [];
    for (const f of readdirSync(FIXTURES).filter((n) => n.endsWith('.jsonl'))) {
      const header = JSON.parse(readFileSync(join(FIXTURES, f), 'utf8').split('\n')[0]!) as { id: string; timestamp: string; cwd: string };
      const dir = join(piDir, `--${header.cwd.replace(/^\//, '').replace(/[/\\:]/g, '-')}--`);
      mkdirSync(dir, { recursive: true });
      copyFileSync(join(FIXTURES, f), join(dir, `${header.timestamp.replace(/[:.]/g, '-')}_${header.id}.jsonl`));
      ids.push(header.id);
    }
    expect(ids).toHaveLength(2);
    const laptop = new Machine(rig.root, 'laptop', { env: { SESSYNC_SESSIONS_DIR: piDir } });
    const desktop = new Machine(rig.root, 'desktop');
    await laptop.login(rig.server);
    await desktop.login(rig.server);

    const before = new Map<string, unknown>();
    for (const id of ids) before.set(id, await laptop.ok(['context', id, '--json']));

    const pushed = await laptop.ok(['sync', '--all', '--json']);
    expect(pushed).toMatchObject({ failed: 0, skippedLines: 0 });
    expect(pushed.pushedEntries).toBeGreaterThan(2000);

    // The original cwd does not exist on the desktop: its project key is the path, mapped to the desktop's folder.
    const pulled = await desktop.ok(['pull', '--all', '--map', `path:/Users/badlogic/workspaces/pi-mono=${desktop.project}`, '--json']);
    expect(pulled).toMatchObject({ createdSessions: 2, failed: 0 });
    for (const id of ids) {
      const file = desktop.fileOf(id);
      expect(readLog(file).header.cwd).toBe(desktop.project);
      expect([...entrySet(file).entries()].sort()).toEqual([...entrySet(laptop.fileOf(id, piDir)).entries()].sort());
      const ctx = await desktop.ok(['context', id, '--json']);
      expect(ctx).toEqual(before.get(id));
      expect(ctx.model).toBeTruthy(); // the v1 header's model came through
      const resumed = await desktop.ok(['resume', id, '--json']);
      expect(resumed.model).toEqual(ctx.model);
      // The laptop still resumes the same context from its (migrated) file.
      expect(await laptop.ok(['context', id, '--json'])).toEqual(before.get(id));
    }
    // A second sync on either side moves nothing.
    expect(await laptop.ok(['sync', '--all', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
    expect(await desktop.ok(['sync', '--all', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
  }, 180_000);

  it('a pull into a local copy of an old-format file says it migrated the file first', async () => {
    const f = 'before-compaction.jsonl';
    const header = JSON.parse(readFileSync(join(FIXTURES, f), 'utf8').split('\n')[0]!) as { id: string; timestamp: string; cwd: string };
    const machines = ['m1', 'm2'].map((name) => {
      const dir = join(rig.root, `${name}-pi`, `--${header.cwd.replace(/^\//, '').replace(/[/\\:]/g, '-')}--`);
      mkdirSync(dir, { recursive: true });
      copyFileSync(join(FIXTURES, f), join(dir, `${header.timestamp.replace(/[:.]/g, '-')}_${header.id}.jsonl`));
      return new Machine(rig.root, name, { env: { SESSYNC_SESSIONS_DIR: join(rig.root, `${name}-pi`) } });
    });
    const [m1, m2] = machines as [Machine, Machine];
    await m1.login(rig.server);
    await m2.login(rig.server);
    await m1.ok(['push', '--all', '--json']);
    const r = await m2.run(['pull', '--all']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/migrated .*format 1 -> \d/);
  }, 120_000);
});
