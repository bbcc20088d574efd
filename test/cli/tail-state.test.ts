// The append cache's leaf equals the full tree's leaf however the file grew (in pieces, by others, torn lines, out-of-order parents).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSession } from '../../shared/jsonl.js';
import { SessionTree } from '../../shared/tree.js';
import { readTailState } from '../../cli/store/tail-state.js';
import { useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-tail-', { beforeEach, afterEach });

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n';

/** Random entries: each parent is null, an earlier entry, or a later one (arrives after its child), or missing. */
const entriesArb = fc.array(fc.tuple(fc.integer({ min: -2, max: 40 }), fc.integer({ min: 0, max: 5 })), { minLength: 1, maxLength: 40 }).map((spec) =>
  spec.map(([p, t], i) => ({
    type: 'message',
    id: `e${String(i).padStart(3, '0')}`,
    parentId: p === -1 ? null : p === -2 ? 'missing' : p === i ? null : `e${String(p % spec.length).padStart(3, '0')}`,
    timestamp: new Date(Date.UTC(2026, 0, 1) + t * 1000).toISOString(),
    message: { role: 'user', content: String(i) },
  })),
);

describe('tail state (append cache)', () => {
  it('leaf after any sequence of appended chunks (with torn lines) equals SessionTree.leafId of the whole file', async () => {
    await fc.assert(
      fc.asyncProperty(entriesArb, fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }), fc.boolean(), async (entries, cuts, torn) => {
        const file = join(home.dir, `s-${Math.random().toString(36).slice(2)}.jsonl`);
        writeFileSync(file, HEADER);
        let i = 0;
        let k = 0;
        while (i < entries.length) {
          const n = cuts[k++ % cuts.length]!;
          appendFileSync(file, entries.slice(i, i + n).map((e) => JSON.stringify(e) + '\n').join(''));
          i += n;
          if (torn && k === 1) appendFileSync(file, '{"type":"mess\n'); // a corrupt line in the middle
          const state = await readTailState(file);
          const full = parseSession(readFileSync(file, 'utf8'));
          const tree = SessionTree.from(full.entries);
          // Cycles are the tree's own repair (it cuts them); the cache is only required to agree on acyclic input.
          if (tree.problems.some((p) => p.reason.includes('cycle'))) return;
          expect(state.leafId).toBe(tree.leafId);
          expect(state.entryCount).toBe(full.entries.length);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a rewritten (shrunk or same-size changed) file is rebuilt, not advanced', async () => {
    const file = join(home.dir, 's.jsonl');
    const e = (id: string, parentId: string | null, s: number) =>
      JSON.stringify({ type: 'message', id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), message: { role: 'user', content: 'x' } }) + '\n';
    writeFileSync(file, HEADER + e('aaa', null, 1) + e('bbb', 'aaa', 2));
    expect((await readTailState(file)).leafId).toBe('bbb');
    writeFileSync(file, HEADER + e('aaa', null, 1) + e('ccc', 'aaa', 3)); // same size, other content
    expect((await readTailState(file)).leafId).toBe('ccc');
    writeFileSync(file, HEADER + e('aaa', null, 1));
    expect((await readTailState(file)).leafId).toBe('aaa');
  });
});
