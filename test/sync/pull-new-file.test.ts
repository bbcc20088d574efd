// A pulled page written as a new file (pull-decode's newFileLines + createPulledFile): the same bytes, counts and tail
// state as the merge into an empty log would give, whatever the page holds (chains, branches, ids twice, bad lines).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { SessionHeader } from '../../shared/entry.js';
import { serializeLine, serializeSession } from '../../shared/jsonl.js';
import { exactTexts, mergeEntries, type IncomingEntry } from '../../shared/merge.js';
import { decode, newFileLines, type Decoded } from '../../cli/sync/pull-decode.js';
import { createPulledFile } from '../../cli/store/session-writer.js';
import type { OpenedBatch } from '../../cli/keys/open-pull.js';
import { useTempHome } from '../helpers/cli.js';
import { comparableTailState, rebuiltTailState } from '../helpers/tail-rebuild.js';

const home = useTempHome('sessync-pull-new-', { beforeEach, afterEach });

const header: SessionHeader = { type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' };

/** A line of a batch: an entry (id, parent, second, content) or a line that is not one. */
type Line = { id: number; parent: number | null; t: number; text: string } | 'bad';

const lineArb: fc.Arbitrary<Line> = fc.oneof(
  { weight: 9, arbitrary: fc.record({ id: fc.integer({ min: 0, max: 12 }), parent: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }), t: fc.integer({ min: 0, max: 4 }), text: fc.constantFrom('a', 'b', 'é ✓') }) },
  { weight: 1, arbitrary: fc.constant('bad' as const) },
);

/** Batches of lines; `chain`: entries 0, 1, 2, ... each the child of the one before (a first pull's usual page). */
const pageArb = fc.oneof(
  fc.array(fc.array(lineArb, { minLength: 0, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
  fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }).map((sizes) => {
    let n = 0;
    return sizes.map((k) => Array.from({ length: k }, (): Line => ({ id: n, parent: n === 0 ? null : n - 1, t: n++, text: 'x' })));
  }),
);

function lineText(l: Line): string {
  if (l === 'bad') return '{"type":"message","id":';
  return serializeLine({ type: 'message', id: `e${l.id}`, parentId: l.parent === null ? null : `e${l.parent}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, l.t)).toISOString(), message: { role: 'user', content: l.text } });
}

/** Stored batches as a pull answers them: bodies as bytes (frames) or as text (JSON answers, opened sealed batches). */
function batchesOf(page: Line[][], asText: boolean): OpenedBatch[] {
  return page.map((lines, i) => {
    const text = lines.map((l) => lineText(l) + '\n').join('');
    const bytes = Buffer.from(text, 'utf8');
    const envelope = { host: 'h1', seq: i + 1, batchId: `b${i}`, entryCount: lines.length, encoding: 'jsonl' as const, sha256: createHash('sha256').update(bytes).digest('hex') };
    return { envelope, body: asText ? text : new Uint8Array(bytes) } as unknown as OpenedBatch;
  });
}


describe('a pulled page written as a new file', () => {
  it('has the bytes, counts and tail state of the merge into an empty log, for any page', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(pageArb, fc.boolean(), async (page, asText) => {
        const decoded: Decoded[] = batchesOf(page, asText).map((b) => decode('sess', b, undefined));
        const incoming: IncomingEntry[] = decoded.flatMap((d) => d.entries);
        const merged = mergeEntries(new Map(), incoming);
        const fresh = newFileLines(decoded, incoming, true);
        const file = join(home.dir, 'p', `s${n++}.jsonl`);
        const state = await createPulledFile(file, header, fresh);

        expect(readFileSync(file, 'utf8')).toBe(serializeSession(header, merged.toAppend, exactTexts(incoming)));
        expect(fresh.count).toBe(merged.toAppend.length);
        expect(fresh.duplicates).toBe(merged.duplicates);
        expect(fresh.conflicts.map((c) => c.id)).toEqual(merged.conflicts.map((c) => c.id));
        expect(fresh.entries?.map((e) => e.id)).toEqual(merged.toAppend.map((e) => e.id));
        expect(state.size).toBe(statSync(file).size);
        expect(state.mtimeMs).toBe(statSync(file).mtimeMs);
        expect(comparableTailState(state)).toEqual(comparableTailState(await rebuiltTailState(file)));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps the parsed entries only when asked (a later page merges against them)', () => {
    const decoded = batchesOf([[{ id: 0, parent: null, t: 0, text: 'x' }]], false).map((b) => decode('sess', b, undefined));
    const incoming = decoded.flatMap((d) => d.entries);
    expect(newFileLines(decoded, incoming, false).entries).toBeUndefined();
    expect(newFileLines(decoded, incoming, true).entries).toHaveLength(1);
  });

  it('makes a missing project folder (0700) when the first open finds none, and writes nothing else there', async () => {
    const decoded = batchesOf([[{ id: 0, parent: null, t: 0, text: 'x' }]], false).map((b) => decode('sess', b, undefined));
    const dir = join(home.dir, 'new', 'project');
    expect(existsSync(dir)).toBe(false);
    await createPulledFile(join(dir, 's.jsonl'), header, newFileLines(decoded, decoded.flatMap((d) => d.entries), false));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, 's.jsonl'), 'utf8').split('\n')).toHaveLength(3);
  });
});
