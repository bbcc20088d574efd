// The fork rule for Codex rollouts: a rollout holds one line of work, so when machines continued one session apart, one
// continuation keeps the session and every other becomes a fork rollout, decided the same way on every machine: by the
// order the server received them in, where the server says (see `arrivals`), else by what this machine saw or by time.
import { sha256HexSync } from './agents/line-hash.js';

/** One mirrored line of the session: its identity, the line before it, its time and exact text. */
export interface ForkLine {
  id: string;
  parentId: string | null;
  timestamp: string;
  text: string;
}

/** Where the server holds a line: the host of the batch it came in, and when the server first stored that batch. */
export interface Arrival {
  host: string;
  /** The server's clock (ms since the epoch); absent for a batch stored before servers recorded it. */
  received?: number;
}

export interface ForkInput {
  /** The original session's id. */
  session: string;
  /** Every line sessync holds for the session (this machine's and those pulled), in any order. */
  lines: readonly ForkLine[];
  /** Identities of the lines of this machine's rollout, in file order; null when there is none here. */
  local: readonly string[] | null;
  /** The last local line the server held at the end of an earlier sync (those reached it first), or null. */
  synced: string | null;
  /** Sessions this machine knows (rollouts and mirrors): a fork already made by any machine decides for all. */
  known: ReadonlySet<string>;
  /**
   * What the server said of the first lines of continuations (`undecidedLines`): a line it holds maps to its arrival, a
   * line not in the map is not on the server yet (it comes after every line that is). Absent: the server was not asked.
   */
  arrivals?: ReadonlyMap<string, Arrival>;
}

export type ForkReason = 'local-later' | 'remote-later' | 'recorded' | 'first-received' | 'earliest';

export interface PlannedFork {
  id: string;
  /** The first line of the continuation that became the fork. */
  at: string;
  /** The fork's line of work in the original's identities, first line first (prefix, then the continuation). */
  path: string[];
  /**
   * Why this continuation is the fork: this machine's reached the server later, another's did, a fork was already made,
   * the server received another machine's first (this machine wrote neither), or by time (the server cannot say).
   */
  reason: ForkReason;
}

export interface ForkPlan {
  /** The original's line of work, first line first: what its rollout must hold on every machine. */
  keep: string[];
  forks: PlannedFork[];
  /** The local rollout holds lines off `keep`: they move into a fork and the rollout is made equal to `keep`. */
  moveLocal: boolean;
}

/** The fork's session id: a uuid derived from the original and the first line of the continuation, the same everywhere. */
export function forkSessionId(session: string, at: string): string {
  const h = sha256HexSync(`codex-fork\n${session}\n${at}`);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Each line's continuations (children), lines whose parent is not held counted as first lines (key null). */
function childrenOf(lines: readonly ForkLine[]): Map<string | null, ForkLine[]> {
  const byId = new Set(lines.map((l) => l.id));
  const children = new Map<string | null, ForkLine[]>();
  for (const l of lines) {
    const p = l.parentId !== null && byId.has(l.parentId) ? l.parentId : null;
    let list = children.get(p);
    if (!list) children.set(p, (list = []));
    list.push(l);
  }
  return children;
}

/** The continuations of one line that no recorded fork decides between: what the rule must order. */
function openChoice(session: string, cs: ForkLine[], known: ReadonlySet<string>): { open: ForkLine[]; recorded: boolean } {
  const open = cs.filter((c) => !known.has(forkSessionId(session, c.id)));
  if (open.length > 0 && open.length < cs.length) return { open, recorded: open.length === 1 };
  return { open: cs, recorded: false };
}

/**
 * The first lines of continuations that only the server's order can decide between (no recorded fork does): the lines
 * whose arrival `planForks` wants. Empty when the session has one line of work, or every branch is decided.
 */
export function undecidedLines(input: Pick<ForkInput, 'session' | 'lines' | 'known'>): string[] {
  const out: string[] = [];
  for (const [parent, cs] of childrenOf(input.lines)) {
    if (parent === null || cs.length < 2) continue;
    const { open, recorded } = openChoice(input.session, cs, input.known);
    if (!recorded) out.push(...open.map((c) => c.id));
  }
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The continuation the server received first, or the ones it cannot order. A batch stored before servers recorded
 * `received` came before every batch with one; a line the server does not hold comes after every line it does.
 * Ties: by host id, then line id.
 */
function firstOnServer(cs: readonly ForkLine[], arrivals: ReadonlyMap<string, Arrival>): { main: ForkLine } | { among: ForkLine[] } {
  const older = cs.filter((c) => arrivals.has(c.id) && arrivals.get(c.id)!.received === undefined);
  if (older.length === 1) return { main: older[0]! };
  if (older.length > 1) return { among: older };
  const timed = cs.filter((c) => arrivals.get(c.id)?.received !== undefined);
  if (timed.length === 0) return { among: [...cs] };
  const key = (c: ForkLine) => arrivals.get(c.id)!;
  const main = [...timed].sort((a, b) => key(a).received! - key(b).received! || cmp(key(a).host, key(b).host) || cmp(a.id, b.id))[0]!;
  return { main };
}

function earliest(cs: readonly ForkLine[]): ForkLine {
  return [...cs].sort((a, b) => (a.timestamp !== b.timestamp ? (a.timestamp < b.timestamp ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0]!;
}

/** Plans which line of work keeps the session and which become forks; pure, so every machine computes the same. */
export function planForks(input: ForkInput): ForkPlan {
  const children = childrenOf(input.lines);
  const localAt = new Map((input.local ?? []).map((id, i) => [id, i]));
  const syncedAt = input.synced !== null ? (localAt.get(input.synced) ?? -1) : -1;
  const forks: PlannedFork[] = [];

  /** Which child continues the line of work; why the others are forks. */
  const choose = (all: ForkLine[]): { main: ForkLine; why: ForkReason } => {
    const { open, recorded } = openChoice(input.session, all, input.known);
    if (recorded) return { main: open[0]!, why: 'recorded' };
    let cs = open;
    // The server's order first: every machine that asks it gets the same answer, whatever it saw and whenever.
    if (input.arrivals) {
      const first = firstOnServer(cs, input.arrivals);
      if ('main' in first) return { main: first.main, why: 'first-received' };
      cs = first.among;
    }
    const mine = cs.find((c) => localAt.has(c.id));
    if (mine && localAt.get(mine.id)! <= syncedAt) return { main: mine, why: 'remote-later' };
    const others = mine ? cs.filter((c) => c !== mine) : cs;
    if (mine && others.length > 0) return { main: earliest(others), why: 'local-later' };
    return { main: earliest(cs), why: 'earliest' };
  };

  /** The line of work from `start` (prefix given), its other continuations planned as forks on the way. */
  const walk = (prefix: string[], start: ForkLine): string[] => {
    const path = [...prefix];
    let at: ForkLine | undefined = start;
    while (at) {
      path.push(at.id);
      const cs: ForkLine[] = children.get(at.id) ?? [];
      if (cs.length === 0) break;
      if (cs.length === 1) {
        at = cs[0];
        continue;
      }
      const { main, why } = choose(cs);
      const here = [...path];
      for (const c of cs) {
        if (c === main) continue;
        const reason: ForkReason =
          why === 'first-received'
            ? localAt.has(c.id)
              ? 'local-later'
              : localAt.has(main.id)
                ? 'remote-later'
                : 'first-received'
            : why === 'local-later' && localAt.has(c.id)
              ? 'local-later'
              : why === 'local-later'
                ? 'earliest'
                : why;
        const fork: PlannedFork = { id: forkSessionId(input.session, c.id), at: c.id, path: [], reason };
        forks.push(fork);
        fork.path = walk(here, c);
      }
      at = main;
    }
    return path;
  };

  const roots = children.get(null) ?? [];
  if (roots.length === 0) return { keep: [], forks: [], moveLocal: false };
  // More than one first line cannot happen for one session's rollout (the first line is its session_meta); the
  // earliest is the session's, and any other root is left to the caller's report.
  const keep = walk([], localAt.size > 0 ? (roots.find((r) => localAt.has(r.id)) ?? earliest(roots)) : earliest(roots));
  const onKeep = new Set(keep);
  const moveLocal = (input.local ?? []).some((id) => !onKeep.has(id));
  forks.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { keep, forks, moveLocal };
}

/**
 * The fork rollout's lines: a session_meta naming the fork and the session it was forked from (the original's own
 * meta otherwise), then the original's lines of the fork's path after its meta, byte-exact, as Codex writes a fork.
 */
export function forkRolloutLines(session: string, fork: PlannedFork, textOf: (id: string) => string): string[] {
  const first = textOf(fork.path[0]!);
  let meta: Record<string, unknown> = {};
  try {
    meta = JSON.parse(first) as Record<string, unknown>;
  } catch {
    // A first line that is not JSON cannot be a session_meta: the fork gets a minimal one.
  }
  const at = JSON.parse(textOf(fork.at)) as { timestamp?: unknown };
  const when = typeof at.timestamp === 'string' ? at.timestamp : typeof meta.timestamp === 'string' ? meta.timestamp : '';
  const payload = meta.type === 'session_meta' && typeof meta.payload === 'object' && meta.payload !== null ? (meta.payload as Record<string, unknown>) : {};
  const ids = { id: fork.id, ...('session_id' in payload ? { session_id: fork.id } : {}) };
  const forkMeta = { ...(meta.type === 'session_meta' ? meta : {}), timestamp: when, type: 'session_meta', payload: { ...payload, ...ids, timestamp: when, forked_from_id: session } };
  const rest = meta.type === 'session_meta' ? fork.path.slice(1) : fork.path;
  return [JSON.stringify(forkMeta), ...rest.map(textOf)];
}
