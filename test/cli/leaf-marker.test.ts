// The leaf marker: when pi's leaf (the last line) and sessync's (the newest tip) differ, one checkout entry makes
// them the same again, under the entry the rule names; when they agree, nothing is written.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alignLeaf, leafMarker } from '../../cli/store/leaf-marker.js';
import { readSession } from '../../cli/store/session-reader.js';
import type { AppendView } from '../../cli/store/session-writer.js';
import { useTempHome } from '../helpers/cli.js';
import { writeLines } from './cli-env.js';

const view = (over: Partial<AppendView>): AppendView => ({ leafId: 'b', lastId: 'b', headerId: 'h', tips: { a: '2026-01-01T00:00:05.000Z', b: '2026-01-01T00:00:09.000Z' }, entryCount: 3, ...over });

describe('leafMarker', () => {
  it('writes nothing when the last line is the leaf, or the file has no entry', () => {
    expect(leafMarker(view({}), 'merged')).toEqual([]);
    expect(leafMarker(view({ leafId: null, lastId: null, tips: {} }), 'local')).toEqual([]);
  });

  for (const [rule, target] of [['merged', 'b'], ['local', 'a']] as const) {
    it(`${rule}: one checkout entry under ${target === 'b' ? 'the newest tip' : 'the last line'}, newer than every tip`, () => {
      const [m, ...rest] = leafMarker(view({ lastId: 'a' }), rule);
      expect(rest).toEqual([]);
      expect(m).toMatchObject({ type: 'custom', customType: 'sessync.checkout', parentId: target, data: { targetId: target } });
      expect(Date.parse(m!.timestamp)).toBeGreaterThan(Date.parse('2026-01-01T00:00:09.000Z'));
    });
  }
});

describe('alignLeaf on a file', () => {
  const dir = useTempHome('sessync-marker-', { beforeEach, afterEach });

  it("a branch pi wrote with an older clock becomes sessync's leaf too; a second call writes nothing", async () => {
    const path = join(dir.dir, 'x.jsonl');
    const m = (id: string, parentId: string | null, ts: string) => ({ type: 'message', id, parentId, timestamp: ts, message: { role: 'user', content: id } });
    writeLines(path, [
      { type: 'session', version: 3, id: 'h', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' },
      m('root0001', null, '2026-01-01T00:10:00.000Z'),
      m('newtip01', 'root0001', '2026-01-01T00:10:05.000Z'),
      m('piskew01', 'root0001', '2026-01-01T00:01:00.000Z'), // pi, 10 minutes behind, branched last
    ]);
    expect((await readSession(path)).tree.leafId).toBe('newtip01');
    const marker = await alignLeaf(path, 'local');
    expect(marker).toMatchObject({ parentId: 'piskew01' });
    const s = await readSession(path);
    expect(s.tree.leafId).toBe(marker!.id);
    expect(s.entries.at(-1)!.id).toBe(marker!.id);
    const bytes = readFileSync(path);
    expect(await alignLeaf(path, 'local')).toBeNull();
    expect(await alignLeaf(path, 'merged')).toBeNull();
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});
