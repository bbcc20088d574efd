// `migrate` over paths and projects (idempotent, backups kept), and a 200,000-deep chain through resume, doctor and tree.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, lines, writeLines } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

function v1File(dir: string, id: string, cwd: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `2025-01-01T00-00-00-000Z_${id}.jsonl`);
  writeLines(path, [
    { type: 'session', id, timestamp: '2025-01-01T00:00:00.000Z', cwd, provider: 'p', modelId: 'm' },
    { type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'hello' } },
    { type: 'message', timestamp: '2025-01-01T00:00:02.000Z', message: { role: 'hookMessage', content: 'from a hook' } },
  ]);
  return path;
}

describe('migrate', () => {
  it('migrates the given paths, keeps .bak, and a second run changes nothing', async () => {
    const path = v1File(join(t.dir, 'loose'), 'aaaa0000', '/somewhere');
    const original = readFileSync(path);
    const r = await t.json(['migrate', path]);
    expect(r).toEqual([expect.objectContaining({ path, fromVersion: 1, toVersion: 3, changed: true, backup: `${path}.bak` })]);
    expect(readFileSync(`${path}.bak`).equals(original)).toBe(true);
    const migrated = lines(path).map((l) => JSON.parse(l));
    expect(migrated[0].version).toBe(3);
    expect(migrated[1]).toMatchObject({ type: 'model_change', provider: 'p', modelId: 'm' }); // the header's model, for pi
    expect(migrated[3].message.role).toBe('custom'); // v2 -> v3: hookMessage becomes custom
    const after = readFileSync(path);
    const again = await t.json(['migrate', path]);
    expect(again[0].changed).toBe(false);
    expect(readFileSync(path).equals(after)).toBe(true);
  });

  it('without paths: this project only; --all: every project', async () => {
    const mine = v1File(join(t.root, `--${t.project.slice(1).replace(/\//g, '-')}--`), 'bbbb0000', t.project);
    const other = v1File(join(t.root, '--elsewhere--'), 'cccc0000', '/elsewhere');
    const r = await t.json(['migrate']);
    expect(r.map((x: any) => x.path)).toEqual([mine]);
    expect(existsSync(`${other}.bak`)).toBe(false);
    const all = await t.json(['migrate', '--all']);
    expect(all.filter((x: any) => x.changed).map((x: any) => x.path)).toEqual([other]);
    expect(existsSync(`${other}.bak`)).toBe(true);
  });
});

describe('deep chains', () => {
  it('a 200,000-deep chain resumes, passes doctor and draws as a tree without recursion', async () => {
    const s = await t.json(['new']);
    const fd = openSync(s.path, 'a');
    const N = 200_000;
    let parent: string | null = null;
    let buf = '';
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i < N; i++) {
      const id = `e${String(i).padStart(7, '0')}`;
      buf += JSON.stringify({ type: 'message', id, parentId: parent, timestamp: new Date(t0 + i).toISOString(), message: { role: i % 2 ? 'assistant' : 'user', content: `m${i}` } }) + '\n';
      parent = id;
      if (buf.length > 1 << 20) {
        writeSync(fd, buf);
        buf = '';
      }
    }
    writeSync(fd, buf);
    closeSync(fd);
    const r = await t.json(['resume', s.id]);
    expect(r).toMatchObject({ leafId: `e${String(N - 1).padStart(7, '0')}`, messageCount: N, problems: [] });
    expect((await t.run(['doctor', s.id])).code).toBe(0);
    const tree = await t.run(['tree', s.id]);
    expect(tree.code, tree.stderr).toBe(0);
    const out = tree.stdout.trimEnd().split('\n');
    expect(out).toHaveLength(N);
    expect(out.at(-1)).toContain('<- leaf');
    // Appending at the leaf of the deep chain reads only the new bytes after the first time.
    const [id] = (await t.json(['append', s.id], JSON.stringify({ type: 'message', message: { role: 'user', content: 'one more' } }) + '\n')).ids;
    expect(lines(s.path).map((l) => JSON.parse(l)).at(-1)).toMatchObject({ id, parentId: parent });
  }, 240_000); // four processes each reading a 20 MB file on a shared 2-core machine: a generous limit, not a speed goal
});
