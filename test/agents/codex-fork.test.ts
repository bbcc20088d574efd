// The fork rule for Codex rollouts, as a table: what each machine holds (its rollout, what reached the server first,
// which forks it knows) -> which line of work keeps the session, which become forks, whether its rollout must move.
import { describe, expect, it } from 'vitest';
import { codex } from '../../shared/agents/codex.js';
import { forkRolloutLines, forkSessionId, planForks, undecidedLines, type Arrival, type ForkLine } from '../../shared/codex-fork.js';

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
  /** What the server said of the continuations' first lines (absent: it was not asked). */
  arrivals?: [string, Arrival][];
  keep: string[];
  forks: { id: string; reason: string; path: string[] }[];
  moveLocal: boolean;
}

// The race: A's X (written later) reached the server first, B's Y (written earlier) after, and no machine has run the
// rule yet. Both pushed without failure, so each one's own continuation counts as synced there.
const raced: [string, Arrival][] = [
  [x1, { host: 'host-a', received: 1_000 }],
  [y1, { host: 'host-b', received: 2_000 }],
];

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
  {
    name: 'the race, on A: the server received X first -> Y is the fork, A keeps its rollout',
    lines: all,
    local: onX,
    synced: onX.at(-1)!,
    arrivals: raced,
    keep: onX,
    forks: [{ id: FY, reason: 'remote-later', path: onY }],
    moveLocal: false,
  },
  {
    name: 'the race, on B: Y counts as synced here, yet the server received X first -> B moves Y into the fork',
    lines: all,
    local: onY,
    synced: onY.at(-1)!,
    arrivals: raced,
    keep: onX,
    forks: [{ id: FY, reason: 'local-later', path: onY }],
    moveLocal: true,
  },
  {
    name: 'the race, on C before any fork is made: the server order, not the line times (Y is earlier), keeps X',
    lines: all,
    local: null,
    synced: null,
    arrivals: raced,
    keep: onX,
    forks: [{ id: FY, reason: 'first-received', path: onY }],
    moveLocal: false,
  },
  {
    name: 'received in the same millisecond: the lower host id keeps the session',
    lines: all,
    local: null,
    synced: null,
    arrivals: [
      [x1, { host: 'host-b', received: 5_000 }],
      [y1, { host: 'host-a', received: 5_000 }],
    ],
    keep: onY,
    forks: [{ id: FX, reason: 'first-received', path: onX }],
    moveLocal: false,
  },
  {
    name: 'X in a batch an older server stored (no received), Y with one: X was on the server first',
    lines: all,
    local: null,
    synced: null,
    arrivals: [
      [x1, { host: 'host-a' }],
      [y1, { host: 'host-b', received: 1 }],
    ],
    keep: onX,
    forks: [{ id: FY, reason: 'first-received', path: onY }],
    moveLocal: false,
  },
  {
    name: 'both in batches an older server stored: the rule of a server that cannot say (the earlier line)',
    lines: all,
    local: null,
    synced: null,
    arrivals: [
      [x1, { host: 'host-a' }],
      [y1, { host: 'host-b' }],
    ],
    keep: onY,
    forks: [{ id: FX, reason: 'earliest', path: onX }],
    moveLocal: false,
  },
  {
    name: "B's Y not on the server yet (its push failed), X is: X keeps the session, Y moves into the fork",
    lines: all,
    local: onY,
    synced: baseIds.at(-1)!,
    arrivals: [[x1, { host: 'host-a', received: 9_000 }]],
    keep: onX,
    forks: [{ id: FY, reason: 'local-later', path: onY }],
    moveLocal: true,
  },
  {
    name: 'a fork already made decides even against the server order: no machine flips',
    lines: all,
    local: null,
    synced: null,
    known: [FX],
    arrivals: raced,
    keep: onY,
    forks: [{ id: FX, reason: 'recorded', path: onX }],
    moveLocal: false,
  },
];

describe('the Codex fork rule', () => {
  for (const r of rows) {
    it(r.name, () => {
      const plan = planForks({ session: O, lines: r.lines, local: r.local, synced: r.synced, known: new Set(r.known ?? []), ...(r.arrivals ? { arrivals: new Map(r.arrivals) } : {}) });
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

  it('the race: A, B and a third machine C that syncs first all plan the same original and the same fork bytes', () => {
    const arrivals = new Map(raced);
    const onA = planForks({ session: O, lines: all, local: onX, synced: onX.at(-1)!, known: new Set(), arrivals });
    const onB = planForks({ session: O, lines: [...all].reverse(), local: onY, synced: onY.at(-1)!, known: new Set(), arrivals });
    const onC = planForks({ session: O, lines: all, local: null, synced: null, known: new Set(), arrivals });
    // Without the server's order, A and B each keep their own and C goes by time: three answers for one session.
    expect(planForks({ session: O, lines: all, local: onY, synced: onY.at(-1)!, known: new Set() }).keep).toEqual(onY);
    for (const p of [onB, onC]) {
      expect(p.keep).toEqual(onA.keep);
      expect(p.forks.map((f) => f.id)).toEqual(onA.forks.map((f) => f.id));
    }
    const text = new Map(all.map((l) => [l.id, l.text]));
    const bytes = (f: (typeof onA.forks)[number]) => forkRolloutLines(O, f, (id) => text.get(id)!);
    expect(bytes(onB.forks[0]!)).toEqual(bytes(onA.forks[0]!));
    expect(bytes(onC.forks[0]!)).toEqual(bytes(onA.forks[0]!));
  });

  it('the lines whose arrival the rule needs: the first lines of continuations no recorded fork decides between', () => {
    expect(undecidedLines({ session: O, lines: all, known: new Set() }).sort()).toEqual([x1, y1].sort());
    expect(undecidedLines({ session: O, lines: all, known: new Set([FY]) })).toEqual([]);
    expect(undecidedLines({ session: O, lines: union([...base, ...X]), known: new Set() })).toEqual([]);
    const three = union([...base, ...X], [...base, ...Y], [...base, ...Z]);
    const z1 = ids([...base, ...Z])[base.length]!;
    expect(undecidedLines({ session: O, lines: three, known: new Set([FY]) }).sort()).toEqual([x1, z1].sort());
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
