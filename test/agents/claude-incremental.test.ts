// The Claude Code mirror reads only what was appended since the last sync: a grown file from its offset, with the
// identities a whole read gives; a rewritten or truncated file is noticed, reported and read again whole.
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCode } from '../../shared/agents/claude-code.js';
import { importClaude } from '../../cli/agents/claude-import.js';
import { loadMirrorState, saveMirrorState } from '../../cli/agents/mirror-state.js';
import { readSession } from '../../cli/store/session-reader.js';
import { tempDir } from '../helpers/cli.js';
import { turn } from './claude-rig.js';

const S = '3b0c6f53-7f6e-4a2b-9f0e-5d6c7b8a9e01';
const CWD = '/home/me/code/app';
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** A line without a uuid, the same bytes each time: its identity is its hash and how often it came before. */
const SNAPSHOT = JSON.stringify({ type: 'file-history-snapshot', messageId: 'm1', snapshot: { files: {} } }) + '\n';

describe('Claude Code mirror: incremental import', () => {
  let t: { dir: string; cleanup(): void };
  let env: NodeJS.ProcessEnv;
  let file: string;
  const notes: string[] = [];
  const note = (x: string) => notes.push(x);
  beforeEach(() => {
    t = tempDir('sessync-cc-incr-');
    env = { HOME: t.dir, SESSYNC_HOME: join(t.dir, 'home'), CLAUDE_CONFIG_DIR: join(t.dir, 'claude') };
    const folder = join(t.dir, 'claude', 'projects', '-home-me-code-app');
    mkdirSync(folder, { recursive: true });
    file = join(folder, `${S}.jsonl`);
    notes.length = 0;
  });
  afterEach(() => t.cleanup());

  async function sync(): Promise<Awaited<ReturnType<typeof importClaude>>> {
    const state = await loadMirrorState(env);
    const r = await importClaude(env, state, note);
    await saveMirrorState(env, state);
    return r;
  }

  /** The mirror's entries as (id, prev, exact line). */
  async function mirrored(): Promise<[string, string | null, string][]> {
    const state = await loadMirrorState(env);
    return (await readSession(state.sessions[S]!.mirror)).entries.map((e) => [e.id, e.parentId, String(e.line)]);
  }

  /** What one whole read of the file gives, as the mirror holds it. */
  function wholeRead(): [string, string | null, string][] {
    return claudeCode.parseFile(readFileSync(file, 'utf8'), { rel: `${S}.jsonl`, kind: 'main' }).lines.map((l) => [l.id, l.prev, l.text]);
  }

  it('a line appended to a long session is read alone, and gets the identity a whole read gives it', async () => {
    let text = '';
    for (let i = 0; i < 200; i++) text += turn(S, CWD, i === 0 ? null : uuid(2 * i - 1), `prompt ${i} ${'x'.repeat(500)}`, [uuid(2 * i), uuid(2 * i + 1)], '2026-01-01T00:00:00.000Z') + SNAPSHOT;
    writeFileSync(file, text);
    const first = await sync();
    expect(first).toMatchObject({ sessions: 1, lines: 800, rewritten: 0 });
    expect(first.bytesRead).toBeGreaterThanOrEqual(statSync(file).size);

    expect(await sync()).toMatchObject({ sessions: 0, lines: 0, bytesRead: 0 }); // nothing changed: nothing read

    // One more identical snapshot line: its identity counts the 200 before it, which this read does not see.
    appendFileSync(file, SNAPSHOT);
    const r = await sync();
    expect(r).toMatchObject({ sessions: 1, lines: 1, rewritten: 0 });
    expect(r.bytesRead).toBeLessThan(statSync(file).size / 10);
    expect(await mirrored()).toEqual(wholeRead());
    expect(wholeRead().at(-1)![0]).toMatch(/-201$/);

    // A line still being written waits; once complete it goes, with the identity and prev a whole read gives.
    const more = turn(S, CWD, uuid(399), 'last', [uuid(400), uuid(401)], '2026-01-02T00:00:00.000Z');
    appendFileSync(file, more.slice(0, 40));
    expect(await sync()).toMatchObject({ lines: 0 });
    appendFileSync(file, more.slice(40));
    expect(await sync()).toMatchObject({ lines: 3 });
    expect(await mirrored()).toEqual(wholeRead());
    expect(notes).toEqual([]);
  });

  it('a file rewritten or truncated below what was read is reported and read again whole; nothing is mirrored twice', async () => {
    const one = turn(S, CWD, null, 'one', [uuid(1), uuid(2)], '2026-01-01T00:00:00.000Z');
    const two = turn(S, CWD, uuid(2), 'two', [uuid(3), uuid(4)], '2026-01-01T00:01:00.000Z');
    writeFileSync(file, one + two);
    await sync();
    const before = await mirrored();

    // Rewritten: the same size, other bytes before the offset (an editor, a tool that re-sorts the file).
    writeFileSync(file, two + one);
    const r = await sync();
    expect(r).toMatchObject({ rewritten: 1, lines: 0 });
    expect(notes.some((n) => n.includes(file) && n.includes('rewritten or truncated'))).toBe(true);
    expect(await mirrored()).toEqual(before);

    // Truncated: noticed. Then it grows again from there: read from there.
    notes.length = 0;
    writeFileSync(file, one);
    expect(await sync()).toMatchObject({ rewritten: 1, lines: 0 });
    const three = turn(S, CWD, uuid(2), 'three, a longer prompt than the second one was', [uuid(5), uuid(6)], '2026-01-01T00:02:00.000Z');
    appendFileSync(file, three);
    expect(await sync()).toMatchObject({ rewritten: 0, lines: 3 });

    // Cut and written longer than before between two syncs: the size alone would not tell, the bytes before do.
    notes.length = 0;
    const four = turn(S, CWD, uuid(2), 'four', [uuid(7), uuid(8)], '2026-01-01T00:03:00.000Z');
    writeFileSync(file, one + four + three);
    expect(await sync()).toMatchObject({ rewritten: 1, lines: 3 });
    expect(notes.filter((n) => n.includes('rewritten or truncated'))).toHaveLength(1);
    const ids = (await mirrored()).map((e) => e[0]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining([uuid(5), uuid(6), uuid(7), uuid(8)]));
  });
});
