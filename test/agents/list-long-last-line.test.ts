// A cold `list` of Claude Code sessions whose files end in a long line without a time (a pasted prompt's last-prompt)
// reads a few KiB of each mirror file, not the long line: the tail state keeps the newest timed line's time.
import { spawnSync } from 'node:child_process';
import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeMirrorRoot } from '../../cli/agents/claude-paths.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine, claudePair, turn } from './claude-rig.js';

const CHILD = join(REPO_ROOT, 'test/cli/list-bytes-child.ts');
const SESSIONS = ['0c0c0c0c-1111-4222-8333-444444444401', '0c0c0c0c-1111-4222-8333-444444444402', '0c0c0c0c-1111-4222-8333-444444444403'];
/** A prompt of 300 KB: its last-prompt line, the file's last, is as long. */
const LONG = 'pasted log line\n'.repeat(20_000);

describe('list: Claude Code files ending in a long line without a time', () => {
  const t = tempDir('sessync-cclonglast-');
  afterAll(() => t.cleanup());

  it('reads at most 4 KiB of each mirror file cold, and shows the newest timed line', async () => {
    const m = new ClaudeMachine(t.dir, 'm');
    const cwd = realpathSync(m.project);
    const want: Record<string, string> = {};
    SESSIONS.forEach((id, i) => {
      const at = `2026-0${i + 2}-01T10:00:00.000Z`;
      const ids: [string, string] = [`c${i}c${i}c${i}c${i}-0000-4000-8000-000000000001`, `c${i}c${i}c${i}c${i}-0000-4000-8000-000000000002`];
      m.write(`${id}.jsonl`, turn(id, cwd, null, LONG, ids, at));
      want[id] = at;
    });
    // The first list makes the mirror files (and their tail states); then the list cache goes: the next list is cold.
    await m.ok(['list', '--agent', 'claude-code', '--json']);
    rmSync(join(m.home, 'cache', 'list'), { recursive: true, force: true });

    const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, claudeMirrorRoot(m.env), cwd], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, ...m.env } });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { read: number; rows: { id: string; lastEntryAt: string }[] };
    expect(Object.fromEntries(out.rows.map((x) => [x.id, x.lastEntryAt]))).toEqual(want);
    // Seen failing on old code: 3,147,566 bytes read, the tail window widened back to each long line's start.
    expect(out.read).toBeLessThanOrEqual(SESSIONS.length * 4096);
  });
});

describe('list: a pulled Claude Code session ending in a line without a time', () => {
  const rig = useServer(undefined, 'sessync-cclistpull-');

  it('shows its newest timed line on the machine that pulled it', async () => {
    const { a, b } = await claudePair(rig.root, 'pulled', rig.server);
    const id = SESSIONS[0]!;
    a.write(`${id}.jsonl`, turn(id, realpathSync(a.project), null, 'short', ['d0d0d0d0-0000-4000-8000-000000000001', 'd0d0d0d0-0000-4000-8000-000000000002'], '2026-02-03T10:00:00.000Z'));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const rows = (await b.ok(['list', '--agent', 'claude-code', '--json'])) as { id: string; lastEntryAt: string }[];
    // Seen failing on old code: "" (the pull's list row took the last line's empty time).
    expect(rows.map((r) => [r.id, r.lastEntryAt])).toEqual([[id, '2026-02-03T10:00:00.000Z']]);
  });
});
