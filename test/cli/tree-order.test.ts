// `tree` draws sibling branches in (timestamp, id) order, so two machines whose files hold the same entries
// in different orders (each appends what it pulls) draw the same tree.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, writeLines } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

const m = (id: string, parentId: string | null, ts: string) => ({ type: 'message', id, parentId, timestamp: ts, message: { role: 'user', content: id } });

describe('tree sibling order', () => {
  it('is (timestamp, id), whatever the file order, in the drawing and in --json', async () => {
    const root = m('root0001', null, '2026-01-01T00:00:00.000Z');
    // Three branches under root: two in the same millisecond (the id decides), one older.
    const b1 = m('bbbb0001', 'root0001', '2026-01-01T00:00:05.000Z');
    const b2 = m('aaaa0002', 'root0001', '2026-01-01T00:00:05.000Z');
    const b3 = m('cccc0003', 'root0001', '2026-01-01T00:00:01.000Z');
    const drawings: string[] = [];
    const children: string[][] = [];
    for (const [i, order] of [[b1, b2, b3], [b3, b2, b1], [b2, b1, b3]].entries()) {
      const id = `0190000${i}-0000-7000-8000-000000000000`;
      const dir = join(t.root, `--${t.project.slice(1).replace(/\//g, '-')}--`);
      mkdirSync(dir, { recursive: true });
      writeLines(join(dir, `2026-01-01T00-00-00-000Z_${id}.jsonl`), [{ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: t.project }, root, ...order]);
      drawings.push((await t.run(['tree', id])).stdout);
      children.push((await t.json(['tree', id])).nodes[0].children);
    }
    expect(children[0]).toEqual(['cccc0003', 'aaaa0002', 'bbbb0001']);
    expect(new Set(children.map((c) => c.join())).size).toBe(1);
    expect(new Set(drawings).size).toBe(1);
    const rows = drawings[0]!.split('\n');
    expect(rows.findIndex((l) => l.includes('cccc0003'))).toBeLessThan(rows.findIndex((l) => l.includes('aaaa0002')));
    expect(rows.findIndex((l) => l.includes('aaaa0002'))).toBeLessThan(rows.findIndex((l) => l.includes('bbbb0001')));
  });
});
