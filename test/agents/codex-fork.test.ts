// The fork rule for Codex rollouts, as a table: what each machine holds (its rollout, what reached the server first,
// which forks it knows) -> which line of work keeps the session, which become forks, whether its rollout must move.
import { describe, expect, it } from 'vitest';
import { codex } from '../../shared/agents/codex.js';
import { forkRolloutLines, forkSessionId, planForks, type ForkLine } from '../../shared/codex-fork.js';

const O = '01a2317f-aba0-7923-8abb-8cf71e3a480c';
const file = { rel: codex.mainFile(O, '2026-01-01T00:00:00Z'), kind: 'main' as const };
const L = (o: object) => JSON.stringify(o);
const meta = L({ timestamp: '2026-01-01T00:00:00.000Z', type: 'session_meta', payload: { session_id: O, id: O, cwd: '/src/app', git: { branch: 'main' } } });
const msg = (t: string, ts: string) => L({ timestamp: ts, type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: t }] } });

const base = [meta, msg('first', '2026-01-01T00:00:01.000Z'), msg('answer', '2026-01-01T00:00:02.000Z')];
// X: written later in time but reached the server first (A synced first); Y: written earlier, offline on B.
const X = [msg('third on A', '2026-01-01T10:00:00.000Z'), msg('answer A', '2026-01-01T10:00:01.000Z')];
const Y = [msg('third on B', '2026-01-01T09:00:00.000Z'), msg('answer B', '2026-01-01T09:00:01.000Z')];
const Z = [msg('third on C', '2026-01-01T11:00:00.000Z')];

function lines(texts: string[]) {
  return codex.parseFile(texts.map((t) => `${t}\n`).join(''), file).lines;
}
const ids = (texts: string[]) => lines(texts).map((l) => l.id);
function union(...files: string[][]): ForkLine[] {
  const out = new Map<string, ForkLine>();
  for (const f of files) for (const l of lines(f)) out.set(l.id, { id: l.id, parentId: l.prev, timestamp: l.timestamp ?? '', text: l.text });
  return [...out.values()];
}

const baseIds = ids(base);
const onX = ids([...base, ...X]);
const onY = ids([...base, ...Y]);
const y1 = onY[base.length]!;
const x1 = onX[base.length]!;
const FY = forkSessionId(O, y1);
const FX = forkSessionId(O, x1);
const all = union([...base, ...X], [...base, ...Y]);

interface Row {
  name: string;
  lines: ForkLine[];
  local: string[] | null;
  synced: string | null;
  known?: string[];
  keep: string[];
  forks: { id: string; reason: string; path: string[] }[];
  moveLocal: boolean;
}

const rows: Row[] = [
  { name: 'one line of work, this machine holds a prefix: keep it all, nothing forks', lines: union([...base, ...X]), local: baseIds, synced: baseIds.at(-1)!, keep: onX, forks: [], moveLocal: false },
  { name: 'a new machine (no rollout here) with one line of work', lines: union([...base, ...X]), local: null, synced: null, keep: onX, forks: [], moveLocal: false },
  {
    name: "A: its continuation reached the server at an earlier sync; B's is pulled now -> B's is the fork",
    lines: all,
    local: onX,
    synced: onX.at(-1)!,
    keep: onX,
    forks: [{ id: FY, reason: 'remote-later', path: onY }],
    moveLocal: false,
  },
  {
    name: "B: its continuation is new to the server, A's was there -> B's moves into the fork (though written earlier)",
    lines: all,
    local: onY,
    synced: baseIds.at(-1)!,
    keep: onX,
    forks: [{ id: FY, reason: 'local-later', path: onY }],
    moveLocal: true,
  },
  {
    name: 'C, a third machine, after a fork was made: the recorded fork decides',
    lines: all,
    local: null,
    synced: null,
    known: [FY],
    keep: onX,
    forks: [{ id: FY, reason: 'recorded', path: onY }],
    moveLocal: false,
  },
  {
    name: 'C, a third machine, before any fork is made: the earlier continuation keeps the session',
    lines: all,
    local: null,
    synced: null,
    keep: onY,
    forks: [{ id: FX, reason: 'earliest', path: onX }],
    moveLocal: false,
  },
];

describe('the Codex fork rule', () => {
  for (const r of rows) {
    it(r.name, () => {
      const plan = planForks({ session: O, lines: r.lines, local: r.local, synced: r.synced, known: new Set(r.known ?? []) });
      expect(plan.keep).toEqual(r.keep);
      expect(plan.forks.map((f) => ({ id: f.id, reason: f.reason, path: f.path }))).toEqual(r.forks);
      expect(plan.moveLocal).toBe(r.moveLocal);
    });
  }

  it('A and B plan the same fork, and write the same bytes for it; C, knowing it, keeps the same original', () => {
    const onA = planForks({ session: O, lines: all, local: onX, synced: onX.at(-1)!, known: new Set() });
    const onB = planForks({ session: O, lines: [...all].reverse(), local: onY, synced: baseIds.at(-1)!, known: new Set() });
    const onC = planForks({ session: O, lines: all, local: null, synced: null, known: new Set([FY]) });
    expect(onB.keep).toEqual(onA.keep);
    expect(onC.keep).toEqual(onA.keep);
    const text = new Map(all.map((l) => [l.id, l.text]));
    const bytes = (f: (typeof onA.forks)[number]) => forkRolloutLines(O, f, (id) => text.get(id)!);
    expect(bytes(onB.forks[0]!)).toEqual(bytes(onA.forks[0]!));
    expect(bytes(onC.forks[0]!)).toEqual(bytes(onA.forks[0]!));
  });

  it("the fork rollout: a session_meta naming the fork and forked_from_id, then the original's lines after its meta, byte-exact", () => {
    const plan = planForks({ session: O, lines: all, local: onX, synced: onX.at(-1)!, known: new Set() });
    const text = new Map(all.map((l) => [l.id, l.text]));
    const out = forkRolloutLines(O, plan.forks[0]!, (id) => text.get(id)!);
    expect(out.slice(1)).toEqual([...base.slice(1), ...Y]);
    const m = JSON.parse(out[0]!) as { timestamp: string; type: string; payload: Record<string, unknown> };
    expect(m).toMatchObject({ type: 'session_meta', timestamp: '2026-01-01T09:00:00.000Z', payload: { id: FY, session_id: FY, forked_from_id: O, cwd: '/src/app', git: { branch: 'main' } } });
    // The fork is a rollout Codex reads: its first line names it, and the adapter finds its session from it.
    const forkLines = codex.parseFile(out.map((l) => `${l}\n`).join(''), { rel: codex.mainFile(FY, m.timestamp), kind: 'main' }).lines;
    expect(forkLines).toHaveLength(out.length);
    expect(codex.sessionOf(codex.mainFile(FY, m.timestamp))).toBe(FY);
  });

  it('three continuations: one keeps the session, the two others are forks with ids of their own', () => {
    const three = union([...base, ...X], [...base, ...Y], [...base, ...Z]);
    const plan = planForks({ session: O, lines: three, local: onX, synced: onX.at(-1)!, known: new Set() });
    expect(plan.keep).toEqual(onX);
    expect(plan.forks.map((f) => f.path.at(-1))).toEqual(expect.arrayContaining([onY.at(-1), ids([...base, ...Z]).at(-1)]));
    expect(new Set(plan.forks.map((f) => f.id)).size).toBe(2);
  });

  it('fork ids are uuids, derived: the same original and continuation give the same id everywhere', () => {
    expect(FY).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(forkSessionId(O, y1)).toBe(FY);
    expect(FX).not.toBe(FY);
  });

  it('no lines: nothing to keep, nothing to fork', () => {
    expect(planForks({ session: O, lines: [], local: null, synced: null, known: new Set() })).toEqual({ keep: [], forks: [], moveLocal: false });
  });
});
