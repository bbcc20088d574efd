// The entry tree of one session: index by id, children, leaf, active branch; iterative, never hides entries.
import type { SessionEntry } from './entry.js';
import { SessyncError } from './errors.js';
import { serializeLine } from './jsonl.js';

export interface TreeProblem {
  entryId: string;
  reason: string;
}

/**
 * Built once from the entries of a session (after migration: every entry has an id).
 *
 * LEAF RULE (the same on every machine, whatever the file order): among the tips (entries with no
 * children), the one with the greatest timestamp; ties go to the greater id. A checkout appends a
 * `custom` entry under the entry continued from, so it becomes the newest tip and thus the leaf.
 *
 * Damage is reported in `problems` and never hides an entry: an entry whose parent is missing
 * (dangling) is a root of its own; in a parent cycle the link of the member with the smallest id
 * is ignored, making it a root; of two entries with one id the later in file order is used (pi's rule).
 */
export class SessionTree {
  /** Entries in file order, one per id (the input array itself when there are no duplicate ids). */
  readonly entries: readonly SessionEntry[];
  readonly size: number;
  readonly leafId: string | null;
  readonly problems: TreeProblem[];
  private readonly index: Map<string, number>;
  /** Parent position per entry; -1 for a root (null parent, dangling parent, cycle broken here). */
  private readonly parentIdx: Int32Array;
  private childStart: Int32Array | null = null;
  private childList: Int32Array | null = null;

  private constructor(entries: readonly SessionEntry[], index: Map<string, number>, parentIdx: Int32Array, problems: TreeProblem[]) {
    this.entries = entries;
    this.size = entries.length;
    this.index = index;
    this.parentIdx = parentIdx;
    this.problems = problems;
    this.leafId = this.findLeaf();
  }

  static from(input: readonly SessionEntry[]): SessionTree {
    const problems: TreeProblem[] = [];
    const n = input.length;
    let index = new Map<string, number>();
    let parentIdx = new Int32Array(n);
    let entries = input;
    // One pass that touches each entry once (the open-a-large-session cost): index the id and link
    // the parent when it is already indexed; -2 marks a parent to look up after the pass.
    let deferred = false;
    let prevId: string | undefined;
    let i = 0;
    for (; i < n; i++) {
      const e = input[i]!;
      index.set(e.id, i);
      if (index.size === i) break; // the Map did not grow: a duplicate id, handled below
      const p = e.parentId;
      if (p === null || p === undefined) parentIdx[i] = -1;
      else if (p === prevId) parentIdx[i] = i - 1; // appended in order: the line before, no lookup
      else {
        const j = index.get(p);
        if (j === undefined) deferred = true;
        parentIdx[i] = j ?? -2;
      }
      prevId = e.id;
    }
    if (i < n) {
      // Rare: duplicate ids. As in pi, the last line with an id is the entry used (pi indexes by id in file
      // order, so a later line replaces an earlier one); it takes the place of the first, and every other
      // line is reported. Nothing is lost: the file keeps every line, and sync sets a differing one aside.
      index = new Map<string, number>();
      const kept: SessionEntry[] = [];
      for (let k = 0; k < n; k++) {
        const e = input[k]!;
        const first = index.get(e.id);
        if (first === undefined) {
          index.set(e.id, kept.length);
          kept.push(e);
          continue;
        }
        const same = serializeLine(kept[first]!) === serializeLine(e);
        problems.push({
          entryId: e.id,
          reason: same
            ? `duplicate id: entry #${k + 1} repeats an earlier entry exactly (one is used)`
            : `duplicate id with different content: entry #${k + 1} conflicts with an earlier entry (the later one is used, as pi does)`,
        });
        kept[first] = e;
      }
      entries = kept;
      parentIdx = new Int32Array(kept.length).fill(-2);
      deferred = true;
    }
    if (deferred) linkRest(entries, index, parentIdx, problems);
    breakCycles(entries, parentIdx, problems);
    return new SessionTree(entries, index, parentIdx, problems);
  }

  get(id: string): SessionEntry | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.entries[i];
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  /** The parent as the tree uses it (null for roots, also for dangling or cycle-broken links). */
  parentOf(id: string): SessionEntry | null {
    const i = this.index.get(id);
    if (i === undefined) return null;
    const p = this.parentIdx[i]!;
    return p < 0 ? null : this.entries[p]!;
  }

  /** Children in file order. */
  children(id: string): SessionEntry[] {
    const i = this.index.get(id);
    if (i === undefined) return [];
    this.buildChildren();
    const out: SessionEntry[] = [];
    for (let k = this.childStart![i]!; k < this.childStart![i + 1]!; k++) out.push(this.entries[this.childList![k]!]!);
    return out;
  }

  /** Entries the tree treats as roots, in file order. */
  roots(): SessionEntry[] {
    const out: SessionEntry[] = [];
    for (let i = 0; i < this.size; i++) if (this.parentIdx[i]! < 0) out.push(this.entries[i]!);
    return out;
  }

  /** Entries with no children, in file order. */
  tips(): SessionEntry[] {
    this.buildChildren();
    const out: SessionEntry[] = [];
    for (let i = 0; i < this.size; i++) if (this.childStart![i] === this.childStart![i + 1]) out.push(this.entries[i]!);
    return out;
  }

  /** Root-to-leaf path ending at leafId (default: the leaf). Iterative, O(depth). Unknown id: not_found. */
  branch(leafId?: string): SessionEntry[] {
    const id = leafId ?? this.leafId;
    if (id === null) return [];
    const start = this.index.get(id);
    if (start === undefined) throw new SessyncError('not_found', `entry ${id} is not in this session`);
    const out: SessionEntry[] = [];
    // Terminates: breakCycles left a forest.
    for (let j = start; j >= 0; j = this.parentIdx[j]!) out.push(this.entries[j]!);
    return out.reverse();
  }

  private findLeaf(): string | null {
    const n = this.size;
    if (n === 0) return null;
    const hasChild = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const p = this.parentIdx[i]!;
      if (p >= 0) hasChild[p] = 1;
    }
    let best = -1;
    for (let i = 0; i < n; i++) {
      if (hasChild[i]) continue;
      if (best < 0 || newerTip(this.entries[i]!, this.entries[best]!)) best = i;
    }
    return best < 0 ? null : this.entries[best]!.id;
  }

  /** Compressed children lists (two Int32Arrays), built on first use: open + branch never pays for it. */
  private buildChildren(): void {
    if (this.childStart) return;
    const n = this.size;
    const start = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const p = this.parentIdx[i]!;
      if (p >= 0) start[p + 1]!++;
    }
    for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
    const fill = start.slice(0, n);
    const list = new Int32Array(start[n]!);
    for (let i = 0; i < n; i++) {
      const p = this.parentIdx[i]!;
      if (p >= 0) list[fill[p]!++] = i;
    }
    this.childStart = start;
    this.childList = list;
  }
}

/** Links every entry still marked -2: its parent by id, or a reported dangling root. */
function linkRest(entries: readonly SessionEntry[], index: Map<string, number>, parentIdx: Int32Array, problems: TreeProblem[]): void {
  for (let i = 0; i < entries.length; i++) {
    if (parentIdx[i] !== -2) continue;
    const e = entries[i]!;
    const p = e.parentId;
    const j = p === null || p === undefined ? -1 : index.get(p);
    if (j === undefined) {
      parentIdx[i] = -1;
      problems.push({ entryId: e.id, reason: `dangling parent: ${p} is not in this session (entry kept as a root)` });
    } else {
      parentIdx[i] = j;
    }
  }
}

function timeOf(e: SessionEntry): number {
  const t = Date.parse(e.timestamp);
  return Number.isNaN(t) ? -Infinity : t;
}

/**
 * Order of sibling branches (and roots) for display: oldest first by (time, timestamp string, id), the same
 * on every machine whatever the file order (pi sorts by time alone, keeping file order for ties).
 */
export function compareByTime(a: SessionEntry, b: SessionEntry): number {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The leaf rule between two tips: whether `a` is newer than `b`. The later time as parsed (a timestamp with an offset,
 * or without milliseconds, compares by the instant it names; an unreadable one is older than any), then on equal times
 * the greater timestamp string (sub-ms digits), then the greater id. The merge orders a pull's entries by it too, so
 * the file's last line is this leaf.
 */
export function newerTip(a: SessionEntry, b: SessionEntry): boolean {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) return ta > tb;
  if (a.timestamp !== b.timestamp) return a.timestamp > b.timestamp;
  return a.id > b.id;
}

/**
 * Parent links form a functional graph; walk each unvisited chain once (O(n) overall), and when a
 * walk meets its own path, cut the cycle at the member with the smallest id (deterministic).
 */
function breakCycles(entries: readonly SessionEntry[], parentIdx: Int32Array, problems: TreeProblem[]): void {
  const n = parentIdx.length;
  const state = new Uint8Array(n); // 0 new, 1 on the current walk, 2 done
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    if (state[i] !== 0) continue;
    let j = i;
    while (j >= 0 && state[j] === 0) {
      state[j] = 1;
      stack.push(j);
      j = parentIdx[j]!;
    }
    if (j >= 0 && state[j] === 1) {
      const from = stack.lastIndexOf(j);
      let cut = j;
      for (let k = from; k < stack.length; k++) if (entries[stack[k]!]!.id < entries[cut]!.id) cut = stack[k]!;
      const len = stack.length - from;
      problems.push({
        entryId: entries[cut]!.id,
        reason: `parent cycle through ${len} entr${len === 1 ? 'y' : 'ies'}: the link to parent ${String(entries[cut]!.parentId)} is ignored`,
      });
      parentIdx[cut] = -1;
    }
    for (const k of stack) state[k] = 2;
    stack.length = 0;
  }
}
