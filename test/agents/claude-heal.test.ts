// A Claude Code file that lost lines after they were synced (cut by another program, `head -n -5`) gets them back on
// the next sync from what sessync had read of it: appended byte-exact, each once, and both machines resume on one leaf.
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadMirrorState } from '../../cli/agents/mirror-state.js';
import { readSession } from '../../cli/store/session-reader.js';
import { useServer } from '../sync/helpers.js';
import { claudePair, lineSet, turn } from './claude-rig.js';

const u = (n: number) => `cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('Claude Code: lines lost here after a sync come back (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-cc-heal-');

  it('`head -n -5` of a synced file: the next sync appends the 5 lines again, once each; the other machine is unchanged', async () => {
    const { a, b } = await claudePair(rig.root, 'Heal', rig.server);
    const id = '66666666-3333-4444-8555-777777777777';
    const cwd = realpathSync(a.project);
    const text =
      turn(id, cwd, null, 'one', [u(1), u(2)], '2026-01-05T00:00:00.000Z') +
      turn(id, cwd, u(2), 'two', [u(3), u(4)], '2026-01-05T00:01:00.000Z') +
      turn(id, cwd, u(4), 'three', [u(5), u(6)], '2026-01-05T00:02:00.000Z');
    a.write(`${id}.jsonl`, text);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 9, failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 9, createdSessions: 1 });
    const leaf = a.leaf(id);
    expect(leaf).toBe(u(6));

    const lines = text.split('\n').filter((l) => l !== '');
    const kept = lines.slice(0, -5).join('\n') + '\n';
    a.write(`${id}.jsonl`, kept); // what `head -n -5` leaves
    const r = await a.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('changed before the part sessync had read');
    const healed = a.read(`${id}.jsonl`);
    expect(healed.startsWith(kept)).toBe(true); // appended, never rewritten
    expect(healed.split('\n').filter((l) => l !== '').sort()).toEqual(lineSet(text)); // each line once
    expect(a.leaf(id)).toBe(leaf);

    // Settled on both: nothing more goes either way, and B's file is as it was.
    const bText = b.read(`${id}.jsonl`);
    for (const m of [a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    expect(a.read(`${id}.jsonl`)).toBe(healed);
    expect(b.read(`${id}.jsonl`)).toBe(bText);
    expect(b.leaf(id)).toBe(leaf);
    // The mirror (what the engine pushes) holds each line once too.
    const mirror = (await loadMirrorState({ ...process.env, ...a.env })).sessions[id]!.mirror;
    const ids = (await readSession(mirror)).entries.map((e) => e.id);
    expect(ids).toHaveLength(9);
    expect(new Set(ids).size).toBe(9);

    // Lines B pulled, cut there: a pull alone brings them back as well.
    const bKept = bText.split('\n').filter((l) => l !== '').slice(0, -2).join('\n') + '\n';
    b.write(`${id}.jsonl`, bKept);
    expect(await b.ok(['pull', '--json'])).toMatchObject({ failed: 0 });
    expect(b.read(`${id}.jsonl`).startsWith(bKept)).toBe(true);
    expect(lineSet(b.read(`${id}.jsonl`))).toEqual(lineSet(bText));
    expect(b.leaf(id)).toBe(leaf);
  }, 120_000);
});
