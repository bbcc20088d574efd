// A cold `list` reads at most 4 KiB of each session file (its header and its last lines), whatever the file's size.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';

const CHILD = join(REPO_ROOT, 'test/cli/list-bytes-child.ts');
const FILES = 200;

describe('list: bytes read per file', () => {
  it('reads at most 4 KiB of each 55 KB session when no cache exists, and finds each newest entry time', () => {
    const t = tempDir('sessync-listbytes-');
    try {
      const root = join(t.dir, 'sessions');
      const cwd = '/work-project';
      const dir = projectDir(root, cwd);
      mkdirSync(dir, { recursive: true });
      const want: Record<string, string> = {};
      for (let f = 0; f < FILES; f++) {
        const id = `sess-${f}`;
        const start = Date.UTC(2026, 0, 1, f);
        let text = JSON.stringify({ type: 'session', version: 3, id, timestamp: new Date(start).toISOString(), cwd }) + '\n';
        let parent: string | null = null;
        for (let i = 0; i < 25; i++) {
          // Long tool output lines, then a short reply last (a turn ends with the assistant's answer).
          const e: { id: string } & Record<string, unknown> = { type: 'message', id: `${id}-${i}`, parentId: parent, timestamp: new Date(start + i * 1000).toISOString(), message: { role: 'toolResult', toolCallId: 't', toolName: 'bash', content: [{ type: 'text', text: 'out '.repeat(500) }] } };
          text += JSON.stringify(e) + '\n';
          parent = e.id;
        }
        const last = new Date(start + 999_000).toISOString();
        text += JSON.stringify({ type: 'message', id: `${id}-end`, parentId: parent, timestamp: last, message: { role: 'assistant', content: [{ type: 'text', text: 'done' }], provider: 'p', model: 'm' } }) + '\n';
        want[id] = last;
        writeFileSync(join(dir, sessionFileName(new Date(start).toISOString(), id)), text);
      }
      const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, root, cwd], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, SESSYNC_HOME: join(t.dir, 'home') } });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { read: number; rows: { id: string; lastEntryAt: string }[] };
      expect(Object.fromEntries(out.rows.map((x) => [x.id, x.lastEntryAt]))).toEqual(want);
      expect(out.read).toBeLessThanOrEqual(FILES * 4096);
    } finally {
      t.cleanup();
    }
  });
});
