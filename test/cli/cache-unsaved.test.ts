// A session file made durable is never followed by a failure because its cache could not be saved: `new` and `fork`
// succeed, once (a retry after a false failure would make the session twice), and say the cache was not saved.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('a cache folder that cannot be written (a plain file where it should be)', () => {
  const base = mkdtempSync(join(tmpdir(), 'sessync-cache-unsaved-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  const sessions = join(base, 'sessions');
  const project = join(base, 'project');
  mkdirSync(join(home, 'cache'), { recursive: true });
  mkdirSync(project);
  mkdirSync(sessions); // a named sessions folder must exist
  writeFileSync(join(home, 'cache', 'tail'), 'not a folder'); // every tail-cache save fails (ENOTDIR)
  const env = { SESSYNC_HOME: home, SESSYNC_SESSIONS_DIR: sessions, HOME: base };
  const run = (args: string[]) => runCli([...args, '--cwd', project], { env });
  const files = () => readdirSync(sessions, { recursive: true }).map(String).filter((n) => n.endsWith('.jsonl'));

  it('new and fork succeed, each making one file, and note the cache once', async () => {
    const made = await run(['new', '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect(files()).toHaveLength(1);
    const notes = made.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { note?: { message: string } });
    expect(notes.map((n) => n.note?.message).join('\n')).toMatch(/could not save the append cache \(ENOTDIR/);
    const forked = await run(['fork', made.json<{ id: string }>().id]);
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stderr).toMatch(/^sessync: note: could not save the append cache/m);
    expect(files()).toHaveLength(2);
  });
});
