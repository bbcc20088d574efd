// Finding sessions: list (this project, --all, header cwd checked), continue, resume by prefix, symlinked project folders.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, jsonl, msg, writeLines } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

/** A session file written directly (as pi would), with a chosen id, for prefix tests. */
function piSession(cwd: string, id: string, mtime: number): string {
  const dir = join(t.root, `--${cwd.replace(/^\//, '').replace(/[/\\:]/g, '-')}--`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `2025-01-01T00-00-00-000Z_${id}.jsonl`);
  writeLines(path, [
    { type: 'session', version: 3, id, timestamp: '2025-01-01T00:00:00.000Z', cwd },
    { type: 'message', id: `${id.slice(0, 4)}m001`, parentId: null, timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi' } },
  ]);
  utimesSync(path, mtime, mtime);
  return path;
}

describe('finding sessions', () => {
  it('list shows this project newest first with name and message count; --all shows every project', async () => {
    const a = await t.json(['new']);
    await t.json(['append', a.id], jsonl([msg('user', 'x'), msg('assistant', 'y')]));
    await t.json(['name', a.id, 'the first one']);
    await new Promise((r) => setTimeout(r, 20));
    const b = await t.json(['new']);
    piSession('/elsewhere/other', 'aaaa1111-0000-4000-8000-000000000000', 1_000);
    const mine = await t.json(['list']);
    expect(mine.map((s: any) => s.id)).toEqual([b.id, a.id]);
    expect(mine[1]).toMatchObject({ name: 'the first one', messageCount: 2, cwd: t.project });
    const all = await t.json(['list', '--all']);
    expect(all.map((s: any) => s.id).sort()).toEqual([a.id, b.id, 'aaaa1111-0000-4000-8000-000000000000'].sort());
    const human = await t.run(['list']);
    expect(human.stdout).toContain('the first one');
  });

  it('a file in this project folder whose header names another cwd is not listed (the folder name is lossy)', async () => {
    // /x/a-b and /x/a/b encode to the same folder name.
    const dashed = join(t.dir, 'x', 'a-b');
    const nested = join(t.dir, 'x', 'a', 'b');
    mkdirSync(dashed, { recursive: true });
    mkdirSync(nested, { recursive: true });
    const one = await t.json(['new', '--cwd', dashed]);
    const two = await t.json(['new', '--cwd', nested]);
    expect(join(one.path, '..')).toBe(join(two.path, '..'));
    expect((await t.json(['list', '--cwd', dashed])).map((s: any) => s.id)).toEqual([one.id]);
    expect((await t.json(['list', '--cwd', nested])).map((s: any) => s.id)).toEqual([two.id]);
  });

  it('a symlinked project folder shows the same sessions as its real path', async () => {
    const link = join(t.dir, 'link-to-project');
    symlinkSync(t.project, link);
    const viaLink = await t.json(['new', '--cwd', link]);
    const viaReal = await t.json(['new']);
    const fromLink = (await t.json(['list', '--cwd', link])).map((s: any) => s.id).sort();
    const fromReal = (await t.json(['list'])).map((s: any) => s.id).sort();
    expect(fromLink).toEqual([viaLink.id, viaReal.id].sort());
    expect(fromReal).toEqual(fromLink);
    const r = await t.json(['continue', '--cwd', link]);
    expect(r.id).toBe(viaReal.id);
  });

  it('a session written by another program shows its message count in list once resumed', async () => {
    const path = piSession(t.project, 'dddd0001-0000-4000-8000-000000000000', Date.now() / 1000);
    expect((await t.json(['list']))[0].messageCount).toBeUndefined(); // list never reads past the header
    await t.json(['resume', 'dddd0001']);
    expect((await t.json(['list']))[0]).toMatchObject({ path, messageCount: 1 });
  });

  it('continue resumes the newest session of this project', async () => {
    const old = await t.json(['new']);
    await t.json(['append', old.id], jsonl([msg('user', 'old')]));
    await new Promise((r) => setTimeout(r, 20));
    const newer = await t.json(['new']);
    const [leaf] = (await t.json(['append', newer.id], jsonl([msg('user', 'new')]))).ids;
    const r = await t.json(['continue']);
    expect(r).toMatchObject({ id: newer.id, path: newer.path, leafId: leaf, messageCount: 1 });
  });

  it('resume by prefix: this project first, then every project; an ambiguous prefix exits 2 and lists the candidates', async () => {
    const now = Date.now() / 1000;
    const here = piSession(t.project, 'abcd0001-0000-4000-8000-000000000000', now);
    piSession('/other/project', 'abcd0002-0000-4000-8000-000000000000', now);
    piSession('/other/project', 'ffff0003-0000-4000-8000-000000000000', now);
    piSession('/third', 'ffff0004-0000-4000-8000-000000000000', now);
    // "abcd" matches one here and one elsewhere: this project wins.
    expect((await t.json(['resume', 'abcd'])).path).toBe(here);
    expect((await t.json(['resume', 'abcd0002'])).id).toBe('abcd0002-0000-4000-8000-000000000000');
    const amb = await t.run(['resume', 'ffff']);
    expect(amb.code).toBe(2);
    expect(amb.stderr).toContain('ambiguous');
    expect(amb.stderr).toContain('ffff0003-0000-4000-8000-000000000000');
    expect(amb.stderr).toContain('ffff0004-0000-4000-8000-000000000000');
    const ambJson = await t.run(['resume', 'ffff', '--json']);
    expect(ambJson.code).toBe(2);
    expect(JSON.parse(ambJson.stderr).error.details.candidates).toHaveLength(2);
    const byPath = await t.json(['resume', here]);
    expect(byPath.id).toBe('abcd0001-0000-4000-8000-000000000000');
  });

  it('list reads headers only: a file whose body is garbage still lists; one without a header is skipped with a note', async () => {
    const s = await t.json(['new']);
    writeFileSync(join(s.path, '..', '2025-01-01T00-00-00-000Z_broken.jsonl'), 'not json at all\n');
    const r = await t.run(['list']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('broken.jsonl');
    expect(r.stdout).toContain(s.id.slice(-8));
  });
});
