// The tail state after an append, advanced from the entries in hand: the same as a rebuild from the file, also when
// another writer appended in the same moment, the file ended in a torn line, or the append was a few bytes; and a
// read of a file its cache still describes writes nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionEntry } from '../../shared/entry.js';
import { parseSession } from '../../shared/jsonl.js';
import { appendWith } from '../../cli/store/session-writer.js';
import { peekTailState, readTailState } from '../../cli/store/tail-state.js';
import { cacheDir, cacheKey } from '../../cli/store/paths.js';
import { useTempHome } from '../helpers/cli.js';
import { comparableTailState, rebuiltTailState } from '../helpers/tail-rebuild.js';

const home = useTempHome('sessync-append-state-', { beforeEach, afterEach });

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n';

function entry(i: number, parent: number | null, t: number, name?: string): SessionEntry {
  const base = { id: `e${i}`, parentId: parent === null ? null : `e${parent}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, t)).toISOString() };
  return (name === undefined ? { ...base, type: 'message', message: { role: 'user', content: `text ${i}` } } : { ...base, type: 'session_info', name }) as SessionEntry;
}


describe('tail state after an append', () => {
  it('equals a rebuild from the file, whatever was appended, by whom, and after what', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }), fc.integer({ min: 0, max: 5 }), fc.boolean()), { minLength: 1, maxLength: 12 }),
        fc.constantFrom('alone', 'other writer', 'torn last line', 'short'),
        async (spec, how) => {
          const file = join(home.dir, `s${n++}.jsonl`);
          writeFileSync(file, HEADER + JSON.stringify(entry(0, null, 0)) + '\n');
          await readTailState(file); // the cache an append starts from
          if (how === 'torn last line') appendFileSync(file, '{"type":"message","id":"torn');
          const mine = how === 'short' ? [{ type: 'custom', id: 'c', parentId: null, timestamp: 'x' } as unknown as SessionEntry] : spec.map(([p, t, named], i) => entry(i + 1, p === null ? null : p % (i + 1), t, named ? `name ${i}` : undefined));
          await appendWith(file, () => {
            // Under the lock, after the state was read: a writer that does not take it (pi) appends a line.
            if (how === 'other writer') appendFileSync(file, JSON.stringify(entry(99, 0, 9, 'theirs')) + '\n');
            return mine;
          });
          const cached = (await peekTailState(file))!;
          expect(comparableTailState(cached)).toEqual(comparableTailState(await rebuiltTailState(file)));
          expect(cached.entryCount).toBe(parseSession(readFileSync(file, 'utf8')).entries.length);
        },
      ),
      { numRuns: 120 },
    );
  });

  it('a read of a file its cache still describes leaves the cache as it is; a grown file gets it saved anew', async () => {
    const file = join(home.dir, 'unchanged.jsonl');
    writeFileSync(file, HEADER + JSON.stringify(entry(0, null, 0)) + '\n');
    await readTailState(file);
    const cache = join(cacheDir('tail'), `${cacheKey(file)}.json`);
    const first = statSync(cache).ino;
    expect((await readTailState(file)).entryCount).toBe(1);
    expect(statSync(cache).ino).toBe(first); // not written again (a save is a temp file renamed over it)
    appendFileSync(file, JSON.stringify(entry(1, 0, 1)) + '\n');
    expect((await readTailState(file)).entryCount).toBe(2);
    expect(statSync(cache).ino).not.toBe(first);
    expect((await peekTailState(file))!.entryCount).toBe(2);
  });
});
