// The per-session index gives what the full read gives (context, leaf, branch, problems, append cache) on random trees, however the file grew.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionEntry } from '../../shared/entry.js';
import { buildContext } from '../../shared/context.js';
import { readSession } from '../../cli/store/session-reader.js';
import { openSessionView } from '../../cli/store/session-file-index-open.js';
import { indexPath, sessionFileIndex } from '../../cli/store/session-file-index.js';
import { readTailState } from '../../cli/store/tail-state.js';
import { cacheDir } from '../../cli/store/paths.js';
import { useTempHome } from '../helpers/cli.js';
import type { TailState } from '../../cli/store/tail-state.js';

/**
 * The append cache from the index equals the one from the file, except that the index may leave the agents' newest
 * time unknown (absent) when the file has entries of types its columns do not tell apart (TailState.newestTimedAt).
 */
function expectSameState(fromIndex: TailState | null, full: TailState): void {
  if (fromIndex === null || fromIndex.newestTimedAt !== undefined) return void expect(fromIndex).toEqual(full);
  const { newestTimedAt: _, ...rest } = full;
  expect(fromIndex).toEqual(rest);
}

const home = useTempHome('sessync-fidx-', { beforeEach, afterEach });

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n';
const id = (i: number) => `e${String(i).padStart(3, '0')}`;

/** One random entry of every kind the context projection treats differently (and some it ignores). */
function makeEntry(kind: number, i: number, parent: string | null, t: number, ref: number): SessionEntry {
  const base = { id: id(i), parentId: parent, timestamp: new Date(Date.UTC(2026, 0, 1) + t * 1000).toISOString() };
  switch (kind) {
    case 0:
      return { ...base, type: 'message', message: { role: 'user', content: `u${i} é✓` } };
    case 1:
      return { ...base, type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: `a${i}` }], provider: `p${i % 3}`, model: `m${i}` } };
    case 2:
      return { ...base, type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: `a${i}` }] } }; // no model: not a model source
    case 3:
      return { ...base, type: 'compaction', summary: `sum${i}`, firstKeptEntryId: id(ref), tokensBefore: i };
    case 4:
      return { ...base, type: 'branch_summary', summary: i % 4 === 0 ? '' : `bs${i}`, fromId: id(ref) };
    case 5:
      return { ...base, type: 'model_change', provider: 'x', modelId: `mc${i}` };
    case 6:
      return { ...base, type: 'thinking_level_change', thinkingLevel: `t${i}` };
    case 7:
      return { ...base, type: 'label', targetId: id(ref), label: i % 3 === 0 ? '' : `l${i}` };
    case 8:
      return { ...base, type: 'session_info', name: `name${i}` };
    case 9:
      return { ...base, type: 'custom_message', customType: 'c', content: `cm${i}`, display: true };
    default:
      return { ...base, type: i % 2 ? 'custom' : 'future_type', customType: 'x', data: { i } };
  }
}

/** A tree: mostly chains (parent = the entry before), some branches off earlier entries, a few missing parents, sometimes a bad line. */
const sessionArb = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 11 }), fc.integer({ min: -3, max: 60 }), fc.integer({ min: 0, max: 8 }), fc.nat(60), fc.integer({ min: 0, max: 30 })), { minLength: 1, maxLength: 60 })
  .map((spec) =>
    spec.map(([kind, p, t, ref, bad], i) => {
      const parent = i === 0 || p === -1 ? null : p === -2 ? 'missing' : p < 0 || p >= i ? id(i - 1) : p % 3 === 0 ? id(p) : id(i - 1);
      const line = JSON.stringify(makeEntry(kind, i, parent, t + i, ref % (i + 1)));
      return bad === 0 ? '{"type":"message",' : bad === 1 ? JSON.stringify({ type: 'message', id: `bad${i}` }) : line;
    }),
  );

async function fullView(path: string) {
  const s = await readSession(path);
  const ctx = buildContext(s.tree, { header: s.header });
  return {
    leafId: s.tree.leafId,
    branch: s.tree.branch(),
    ctx,
    problems: s.problems,
    treeProblems: s.tree.problems,
    labels: s.entries.filter((e) => e.type === 'label'),
    info: { model: ctx.model, thinkingLevel: ctx.thinkingLevel, messageCount: ctx.messages.length },
  };
}

async function indexedView(path: string, opts: { keep?: boolean } = {}) {
  const v = await openSessionView(path, opts);
  return {
    indexed: v.index !== null,
    leafId: v.leafId,
    // contextInfo first: a view that kept nothing of its parse reads (and counts) from the file alone.
    info: await v.contextInfo(),
    branch: await v.branch(),
    ctx: await v.context(),
    problems: v.problems,
    treeProblems: v.treeProblems,
    labels: await v.labels(),
  };
}

/**
 * The view as resume opens it (nothing parsed kept; the index advanced over what was appended), then rebuilt from
 * nothing as the other commands open it (the parsed entries kept for the reads): both equal the full read.
 */
async function expectSame(path: string, indexable = true): Promise<void> {
  const full = await fullView(path);
  const { indexed, ...counted } = await indexedView(path, { keep: false });
  expect(indexed).toBe(indexable);
  expect(counted).toEqual(full);
  rmSync(indexPath(path), { force: true });
  const { indexed: again, ...kept } = await indexedView(path);
  expect(again).toBe(indexable);
  expect(kept).toEqual(full);
}

function fileIn(dir: string): string {
  return join(dir, `s-${Math.random().toString(36).slice(2)}.jsonl`);
}

describe('session index: same result as the full read', () => {
  it('same context, leaf, branch, problems and labels on random trees with compactions and branch summaries, indexed after every chunk', async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb, fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 2 }), async (lines, cuts, end) => {
        const file = fileIn(home.dir);
        writeFileSync(file, HEADER);
        for (let i = 0, k = 0; i < lines.length; k++) {
          const n = cuts[k % cuts.length]!;
          appendFileSync(file, lines.slice(i, i + n).map((l) => l + '\n').join(''));
          i += n;
          await expectSame(file);
        }
        // A last line without its newline: an entry when it parses (a new root, or an older child of the last line,
        // which is then no tip), a torn write when not.
        const lastId = id(lines.length - 1); // the last line's id, unless that line is a bad one
        appendFileSync(file, end === 0 ? '{"type":"message","id":"to' : JSON.stringify(end === 1 ? makeEntry(0, 999, null, 99, 0) : makeEntry(0, 999, lastId, 0, 0)));
        await expectSame(file);
      }),
      { numRuns: 120 },
    );
  });

  it('lines that are not ASCII (ids, parents, timestamps, bad lines, Unicode blanks, invalid UTF-8) are indexed as the full read takes them', async () => {
    // Resume indexes non-ASCII lines from a Latin-1 reading of their bytes: whatever it keeps or reports must be the UTF-8 text.
    const odd = ['', 'é', '🙂', 'ü\u00a0', '\u2028', 'ÿ'];
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    // Kind of line; where the odd characters go (id, timestamp, parent, text: chosen apart, so one field's fallback does not cover another's); a reference; the timestamp's form.
    const lineArb = fc.tuple(fc.integer({ min: 0, max: 14 }), fc.tuple(fc.nat(5), fc.nat(5), fc.nat(5), fc.nat(5)), fc.nat(60), fc.integer({ min: 0, max: 3 }));
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { minLength: 1, maxLength: 40 }), async (spec) => {
        const ids: string[] = [];
        const parts: Buffer[] = [bytes(HEADER)];
        let repeated = false;
        spec.forEach(([kind, [oId, oTs, oParent, oText], ref, ts], i) => {
          const myId = `${odd[oId]}${i}`;
          const parent = ids.length === 0 ? null : kind === 1 ? ids[ref % ids.length]! : kind === 2 ? `missing${odd[oParent]}` : ids[ids.length - 1]!;
          const timestamp = ts === 0 ? `2026-01-01T00:00:0${i % 10}Z` : ts === 1 ? `un${odd[oTs]}known` : new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
          const entry = { type: 'message', id: myId, parentId: parent, timestamp, message: { role: 'user', content: `x${odd[oText]}y` } };
          let line: Buffer;
          let kept: string | null = myId;
          if (kind === 3) {
            // Not an entry, for reasons that quote its type and id.
            const type = `message${odd[oText]}`;
            const bad = [{ type: 'message', id: myId, parentId: parent, timestamp }, { type, id: myId, parentId: 5, timestamp }, { type, id: myId, parentId: parent }][ref % 3];
            line = bytes(JSON.stringify(bad));
            kept = null;
          } else if (kind === 4) {
            line = bytes(`{"type":"message","id":"${myId}`); // invalid JSON
            kept = null;
          } else if (kind === 5) {
            // Blank by Unicode's white space, or not JSON (a lone 0xa0 byte is no character: U+FFFD, where Latin-1 reads a space).
            line = ref % 5 === 4 ? Buffer.from([0x20, 0xa0]) : bytes(['\u3000', '\u00a0', ' ', `${odd[oText]}`][ref % 4]!);
            kept = null;
          } else if (kind === 6) {
            // Invalid UTF-8 inside the id and inside the content: the full read takes them as U+FFFD.
            line = Buffer.concat([bytes('{"type":"message","id":"b'), Buffer.from([0xff, 0xc3]), bytes(`${i}","parentId":null,"timestamp":"${timestamp}","message":{"role":"user","content":"`), Buffer.from([0xe2, 0x82]), bytes('"}}')]);
            kept = `b\ufffd\ufffd${i}`;
          } else if (kind === 7) {
            line = bytes(JSON.stringify({ ...entry, type: ref % 2 ? 'session_info' : `info${odd[oText]}`, name: `n${odd[oText]}` }));
          } else if (kind === 8) {
            line = bytes(JSON.stringify({ ...entry, content: 'é'.repeat(40_000) })); // longer than a read: lines cut across reads
          } else if (kind === 9 && ref % 8 === 0 && ids.length > 0) {
            line = bytes(JSON.stringify({ ...entry, id: ids[ref % ids.length]! })); // a repeated id: read whole
            repeated = true;
            kept = null;
          } else {
            line = bytes(JSON.stringify(entry));
          }
          if (kept !== null) ids.push(kept);
          parts.push(line, bytes('\n'));
        });
        const file = fileIn(home.dir);
        writeFileSync(file, Buffer.concat(parts));
        await expectSame(file, !repeated);
        rmSync(indexPath(file), { force: true });
        const fromIndex = await (await openSessionView(file, { keep: false })).tailState();
        rmSync(cacheDir('tail'), { recursive: true, force: true });
        if (!repeated) expectSameState(fromIndex, await readTailState(file));
      }),
      { numRuns: 150 },
    );
  });

  it('a fresh build, which looks for repeated ids only at its end, stops where indexing line by line stops', async () => {
    // Appending indexes line by line (each id looked up as it comes); a first build sorts the ids once at the end.
    // Both must stop at the same line, for the first of: a repeated id, a split line, a parent written after its child.
    const entry = (i: number, myId: string, parent: string | null) => JSON.stringify({ type: 'message', id: myId, parentId: parent, timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), message: { role: 'user', content: 'x' } });
    const lineArb = fc.tuple(fc.integer({ min: 0, max: 6 }), fc.nat(5));
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { minLength: 1, maxLength: 30 }), fc.nat(30), async (spec, cutAt) => {
        let prev: string | null = null;
        const lines = spec.map(([kind, r], i) => {
          const myId = kind <= 1 ? `e${r}` : `u${i}`; // e<r>: may repeat an earlier id
          const parent = kind === 2 ? `e${r}` : prev; // e<r>: may name an entry written later
          prev = myId;
          if (kind === 3) return '{"type":"message",'; // a problem, kept only before the stop
          if (kind === 4) return entry(i, myId, parent) + entry(i, `v${i}`, myId); // a split line
          return entry(i, myId, parent);
        });
        const file = fileIn(home.dir);
        const cut = cutAt % (lines.length + 1);
        writeFileSync(file, HEADER + lines.slice(0, cut).map((l) => l + '\n').join(''));
        await sessionFileIndex(file);
        appendFileSync(file, lines.slice(cut).map((l) => l + '\n').join(''));
        const appended = await sessionFileIndex(file);
        rmSync(indexPath(file), { force: true });
        const fresh = await sessionFileIndex(file);
        const facts = (x: typeof fresh) => ({ unsupported: x.unsupported, covered: x.covered, lines: x.lines, problems: x.problems, n: x.entries.n });
        expect(facts(fresh)).toEqual(facts(appended));
      }),
      { numRuns: 200 },
    );
  });

  it('the append cache derived from the index equals the one built from the file', async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb, async (lines) => {
        const file = fileIn(home.dir);
        writeFileSync(file, HEADER + lines.map((l) => l + '\n').join(''));
        const fromIndex = await (await openSessionView(file)).tailState();
        rmSync(cacheDir('tail'), { recursive: true, force: true });
        expectSameState(fromIndex, await readTailState(file));
      }),
      { numRuns: 80 },
    );
  });

  it('a file the index cannot serve (old format, split line, duplicate ids, no header) is read whole', async () => {
    const e = (i: number, p: string | null) => JSON.stringify(makeEntry(0, i, p, i, 0));
    const cases = [
      JSON.stringify({ type: 'session', version: 2, id: 's', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n' + e(1, null) + '\n',
      HEADER + e(1, null) + e(2, id(1)) + '\n',
      HEADER + e(1, null) + '\n' + e(1, null) + '\n',
      '\n' + HEADER + e(1, null) + '\n',
    ];
    for (const text of cases) {
      const file = fileIn(home.dir);
      writeFileSync(file, text);
      const v = await openSessionView(file);
      expect(v.index).toBeNull();
      const full = await fullView(file);
      expect(v.leafId).toBe(full.leafId);
      expect(await v.context()).toEqual(full.ctx);
      expect(await v.contextInfo()).toEqual(full.info);
    }
    const bad = fileIn(home.dir);
    writeFileSync(bad, 'not a session\n');
    await expect(openSessionView(bad)).rejects.toMatchObject({ code: 'corrupt' });
  });

  it('real pi sessions (../shared/fixtures/pi-v3) give the same view indexed', async (t) => {
    const dir = join(process.cwd(), '..', 'shared', 'fixtures', 'pi-v3');
    if (!existsSync(dir)) {
      t.skip(); // fixtures absent: nothing real to compare against
      return;
    }
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const copy = fileIn(home.dir);
      writeFileSync(copy, readFileSync(join(dir, f)));
      await expectSame(copy);
      expect(statSync(indexPath(copy)).size).toBeLessThan(statSync(copy).size);
    }
  });
});
