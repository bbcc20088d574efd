// Opens a session for resume, context, log and share: from its index, reading only the entries asked for, or whole when the index cannot serve it.
import { closeSync, openSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { buildContext, contextOfBranch, type SessionContext } from '../../shared/context.js';
import { checkEntry, checkHeader, type SessionEntry, type SessionHeader } from '../../shared/entry.js';
import { splitJsonValues, type Problem } from '../../shared/jsonl.js';
import { SessionTree, type TreeProblem } from '../../shared/tree.js';
import { hashId, KIND, KIND_TYPES, NO_PARENT, OTHER_PARENT, type EntryColumns, type IndexState } from './session-file-index-codec.js';
import { clip, decode, indexPath, kindOf, readAt, sameEntry, sessionFileIndex, type IndexOptions } from './session-file-index.js';
import { readSession } from './session-reader.js';
import { shapeOf, tailStateFromIndex, type ColumnShape } from './session-file-index-tail.js';
import type { TailState } from './tail-state.js';

/** What the commands that continue or show one branch need of a session. */
export interface SessionView {
  path: string;
  header: SessionHeader;
  leafId: string | null;
  /** Damage the tree repaired (dangling parents, cycles, repeated ids), as SessionTree reports it. */
  treeProblems: TreeProblem[];
  /** Lines not loaded, as the full reader reports them. */
  problems: Problem[];
  /** The index this view reads from; null when the file was read whole. */
  index: IndexState | null;
  /** Every entry's place in the tree; from the index its entries carry only id, parentId, timestamp and type (made on first use). */
  tree(): SessionTree;
  /** The context projection of the branch ending at leafId (default: the leaf). */
  context(leafId?: string): Promise<SessionContext>;
  /** What context() gives, but only the count of its messages: reads the few entries that decide model and thinking level. */
  contextInfo(leafId?: string): Promise<ContextInfo>;
  /** Whole entries, root to leafId (default: the leaf). */
  branch(leafId?: string): Promise<SessionEntry[]>;
  /** Whole label entries, in file order. */
  labels(): Promise<SessionEntry[]>;
  /** The append cache as the index gives it for free; null when the file was read whole (the cache reads it then). */
  tailState(): Promise<TailState | null>;
}

/** The context projection without its messages: what resuming a session reports. */
export interface ContextInfo {
  model: SessionContext['model'];
  thinkingLevel: string;
  messageCount: number;
}

function infoOf(ctx: SessionContext): ContextInfo {
  return { model: ctx.model, thinkingLevel: ctx.thinkingLevel, messageCount: ctx.messages.length };
}

/** An entry line no longer says what the index recorded: the file changed under the index since it was checked. */
class StaleIndex extends Error {}

const NL = 0x0a;
/** Lines this close together are read in one call (one read beats many for a branch stored in order). */
const MAX_GAP = 64 << 10;
const MAX_SPAN = 8 << 20;

/** The index opened: the header, and a last line without its newline that parses (not indexed: it may still grow), kept whole. */
interface Opened {
  header: SessionHeader;
  c: EntryColumns;
  problems: Problem[];
  /** Position of the unterminated last entry in the columns (pushed for this view only), or -1. */
  tailAt: number;
  tail: SessionEntry | null;
  leaf: number;
  treeProblems: TreeProblem[];
  /** shapeOf the committed entries (the unterminated last one not counted). */
  shape: ColumnShape;
}

function timeAt(c: EntryColumns, i: number): number {
  const t = c.ms[i]!;
  return Number.isNaN(t) ? -Infinity : t;
}

/**
 * SessionTree's leaf rule on the columns: the newest tip; equal times by timestamp text, then id. The tips are those
 * of the committed entries (`shape`), less the parent of an unterminated last entry at `tailAt`, plus that entry.
 */
function leafOf(c: EntryColumns, shape: ColumnShape, tailAt: number): number {
  const tailParent = tailAt >= 0 ? c.parent[tailAt]! : -1;
  let best = -1;
  let bestTime = 0;
  const consider = (i: number) => {
    const t = timeAt(c, i);
    if (best < 0 || t > bestTime || (t === bestTime && laterTie(c, i, best))) {
      best = i;
      bestTime = t;
    }
  };
  for (const i of shape.tips) if (i !== tailParent) consider(i);
  if (tailAt >= 0) consider(tailAt);
  return best;
}

function laterTie(c: EntryColumns, a: number, b: number): boolean {
  const ta = c.timestamp(a);
  const tb = c.timestamp(b);
  return ta !== tb ? ta > tb : c.id(a) > c.id(b);
}

function open(path: string, s: IndexState): Opened | null {
  if (s.unsupported !== null || s.headerEnd === 0) return null;
  const c = s.entries;
  const fd = openSync(path, 'r');
  try {
    const hb = readAt(fd, 0, s.headerEnd);
    let header: SessionHeader;
    try {
      header = JSON.parse(hb.toString('utf8', 0, hb.length - 1)) as SessionHeader;
    } catch {
      return null; // changed since it was indexed: read whole
    }
    if (checkHeader(header) !== null || header.id !== s.headerId) return null;
    const problems = [...s.problems];
    let tail: SessionEntry | null = null;
    let tailAt = -1;
    if (s.size > s.covered) {
      // The full reader's rule for a last line without a newline: an entry when it parses, else a torn write.
      const b = readAt(fd, s.covered, s.size);
      const text = decode(b, 0, b.length);
      if (text.length > 0 && !(text.charCodeAt(0) !== 123 && text.trim() === '')) {
        const line = s.lines + 1;
        let v: unknown;
        try {
          v = JSON.parse(text);
        } catch (err) {
          if (splitJsonValues(text) !== null) return null;
          problems.push({ line, reason: clip(`torn last line (no newline, invalid JSON): ${(err as Error).message}`) });
        }
        if (v !== undefined) {
          const why = checkEntry(v);
          if (why !== null) problems.push({ line, reason: clip(why) });
          else {
            tail = v as SessionEntry;
            if (c.find(tail.id) >= 0 || [...c.parentText.values()].includes(tail.id)) return null; // the full reader's case
            const p = tail.parentId === null ? NO_PARENT : c.find(tail.parentId);
            const parent = p === -1 ? OTHER_PARENT : p;
            tailAt = c.n;
            c.push(tail.id, parent, parent === OTHER_PARENT ? tail.parentId : null, tail.timestamp, kindOf(tail), line, s.covered, b.length);
          }
        }
      }
    }
    const treeProblems: TreeProblem[] = [];
    // In file order: the map is filled in file order.
    for (const [i, p] of c.parentText) treeProblems.push({ entryId: c.id(i), reason: `dangling parent: ${p} is not in this session (entry kept as a root)` });
    const shape = shapeOf(c, tailAt >= 0 ? tailAt : c.n);
    return { header, c, problems, tailAt, tail, leaf: leafOf(c, shape, tailAt), treeProblems, shape };
  } finally {
    closeSync(fd);
  }
}

/** Whole entries at positions `at`, in that order; neighbouring lines are read together. Throws StaleIndex. */
function readEntries(path: string, o: Opened, at: readonly number[], recent: (unknown | undefined)[] | undefined): SessionEntry[] {
  const c = o.c;
  const out: SessionEntry[] = new Array(at.length);
  const order = at.map((_, k) => k);
  // A branch is mostly stored in file order: sort only when it is not.
  let sorted = true;
  for (let k = 1; k < at.length && sorted; k++) sorted = c.offset[at[k - 1]!]! <= c.offset[at[k]!]!;
  if (!sorted) order.sort((a, b) => c.offset[at[a]!]! - c.offset[at[b]!]!);
  const fd = openSync(path, 'r');
  try {
    for (let k = 0; k < order.length; ) {
      const first = at[order[k]!]!;
      const known = first === o.tailAt ? o.tail : (recent?.[first] as SessionEntry | undefined);
      if (known) {
        out[order[k++]!] = known; // just parsed from these very bytes, or the unterminated last line
        continue;
      }
      const start = c.offset[first]!;
      let end = start + c.length[first]!;
      let j = k + 1;
      for (; j < order.length; j++) {
        const e = at[order[j]!]!;
        if (e === o.tailAt || recent?.[e] !== undefined || c.offset[e]! - end > MAX_GAP || c.offset[e]! + c.length[e]! - start > MAX_SPAN) break;
        end = Math.max(end, c.offset[e]! + c.length[e]!);
      }
      const b = readAt(fd, start, end + 1);
      for (; k < j; k++) {
        const e = at[order[k]!]!;
        const from = c.offset[e]! - start;
        const to = from + c.length[e]!;
        if (b[to] !== NL) throw new StaleIndex();
        let v: SessionEntry;
        try {
          v = JSON.parse(decode(b, from, to)) as SessionEntry;
        } catch {
          throw new StaleIndex();
        }
        if (checkEntry(v) !== null || !sameEntry(c, e, v)) throw new StaleIndex();
        out[order[k]!] = v;
      }
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** Positions root to `leaf`. */
function branchAt(c: EntryColumns, leaf: number): number[] {
  const out: number[] = [];
  for (let j = leaf; j >= 0; j = c.parent[j]!) out.push(j);
  return out.reverse();
}

const IN_CONTEXT = new Set<number>([KIND.message, KIND.assistantModel, KIND.customMessage, KIND.branchSummary]);

/** What the projection of a branch reads: the latest compaction, model source and thinking-level change, and from where on entries are in context. */
interface ContextPlan {
  comp: number;
  think: number;
  model: number;
  /** The compaction's first kept entry on the branch, or -1. */
  kept: number;
  /** Branch positions from here on are in context (when their kind is). */
  from: number;
  /** The compaction entry, read whole (null without one). */
  compaction: SessionEntry | null;
  /** Messages and custom messages on the branch from `from` on. */
  messages: number;
  /** Branch positions of the branch summaries from `from` on. */
  summaries: number[];
}

function planContext(read: (at: readonly number[]) => SessionEntry[], c: EntryColumns, path: readonly number[]): ContextPlan {
  let comp = -1;
  let think = -1;
  let model = -1;
  // Counted in the same walk (indexedInfo's count): every message, and how many came before the latest compaction.
  let messages = 0;
  let beforeComp = 0;
  const summaries: number[] = [];
  for (let i = 0; i < path.length; i++) {
    const k = c.kind[path[i]!]!;
    if (k === KIND.compaction) {
      comp = i;
      beforeComp = messages;
    } else if (k === KIND.thinking) think = i;
    else if (k === KIND.model || k === KIND.assistantModel) model = i;
    if (k === KIND.message || k === KIND.assistantModel || k === KIND.customMessage) messages++;
    else if (k === KIND.branchSummary) summaries.push(i);
  }
  let kept = -1;
  let from = 0;
  let compaction: SessionEntry | null = null;
  if (comp >= 0) {
    compaction = read([path[comp]!])[0]!;
    const first = compaction.firstKeptEntryId;
    // Ids are unique here (a repeated one is read whole), so searching back from the compaction finds the same
    // entry as buildContext's forward search, sooner; the hash column spares making an id string per entry.
    const h = typeof first === 'string' ? hashId(first) : -1;
    let keptMessages = 0;
    for (let i = comp - 1; i >= 0 && h >= 0; i--) {
      const e = path[i]!;
      const k = c.kind[e]!;
      if (k === KIND.message || k === KIND.assistantModel || k === KIND.customMessage) keptMessages++;
      if (c.idHash[e] === h && c.id(e) === first) {
        kept = i;
        break;
      }
    }
    from = kept >= 0 ? kept : comp;
    messages = messages - beforeComp + (kept >= 0 ? keptMessages : 0);
  }
  return { comp, think, model, kept, from, compaction, messages, summaries: summaries.filter((i) => i >= from) };
}

/**
 * The context projection reading only what it needs: the latest compaction, model source and thinking-level change
 * on the branch, the compaction's first kept entry, and the entries it puts in context after that.
 */
function indexedContext(read: (at: readonly number[]) => SessionEntry[], c: EntryColumns, header: SessionHeader, path: readonly number[]): SessionContext {
  const { comp, think, model, kept, from } = planContext(read, c, path);
  // Marks, not a Set and a sort: a session never compacted puts every message in context.
  const need = new Uint8Array(path.length);
  if (comp >= 0) need[comp] = 1;
  if (think >= 0) need[think] = 1;
  if (model >= 0) need[model] = 1;
  for (let i = from; i < path.length; i++) if (IN_CONTEXT.has(c.kind[path[i]!]!)) need[i] = 1;
  const at: number[] = [];
  for (let i = 0; i < path.length; i++) if (need[i] === 1 || i === kept) at.push(i);
  const read1 = at.filter((i) => need[i] === 1);
  const full = read(read1.map((i) => path[i]!));
  const trimmed: SessionEntry[] = new Array(at.length);
  for (let k = 0, r = 0; k < at.length; k++) {
    const i = at[k]!;
    if (need[i] === 1) trimmed[k] = full[r++]!;
    else {
      const e = path[i]!;
      trimmed[k] = { type: '', id: c.id(e), parentId: c.parentId(e), timestamp: c.timestamp(e) }; // the kept entry, matched by id only
    }
  }
  return contextOfBranch(trimmed, header);
}

/**
 * indexedContext without its messages: they are counted from the kinds (a message or custom message is one message
 * whatever it holds; a branch summary only when its summary is not empty, so those are read), and model and
 * thinking level come from the projection of the two entries that set them. Reads a handful of entries.
 */
function indexedInfo(read: (at: readonly number[]) => SessionEntry[], c: EntryColumns, header: SessionHeader, path: readonly number[]): ContextInfo {
  const { think, model, compaction, messages, summaries } = planContext(read, c, path);
  let messageCount = messages + (compaction === null ? 0 : 1); // and the compaction's summary message
  for (const e of read(summaries.map((i) => path[i]!))) if (typeof e.summary === 'string' && e.summary !== '') messageCount++;
  const setters = [think, model].filter((i) => i >= 0).sort((a, b) => a - b);
  const ctx = contextOfBranch(read(setters.map((i) => path[i]!)), header);
  return { model: ctx.model, thinkingLevel: ctx.thinkingLevel, messageCount };
}

function wholeView(path: string, s: Awaited<ReturnType<typeof readSession>>): SessionView {
  return {
    path,
    header: s.header,
    leafId: s.tree.leafId,
    treeProblems: s.tree.problems,
    problems: s.problems,
    index: null,
    tree: () => s.tree,
    context: async (leafId) => buildContext(s.tree, { leafId, header: s.header }),
    contextInfo: async (leafId) => infoOf(buildContext(s.tree, { leafId, header: s.header })),
    branch: async (leafId) => s.tree.branch(leafId),
    labels: async () => s.tree.entries.filter((e) => e.type === 'label'),
    tailState: async () => null,
  };
}

function stubTree(c: EntryColumns): SessionTree {
  const stubs: SessionEntry[] = new Array(c.n);
  for (let i = 0; i < c.n; i++) stubs[i] = { id: c.id(i), parentId: c.parentId(i), timestamp: c.timestamp(i), type: KIND_TYPES[c.kind[i]!] ?? '' };
  return SessionTree.from(stubs);
}

/**
 * The session at `path`, from its index (built or brought up to date first) when the index serves it, else read
 * whole. An entry line that no longer matches its record (the file changed between the check and the read) makes
 * the index be rebuilt once; after that the file is read whole. `opts.keep` false: the caller asks contextInfo and
 * little else, so what indexing parses is not kept for later reads (see IndexOptions).
 */
export async function openSessionView(path: string, opts: IndexOptions = {}, retried = false): Promise<SessionView> {
  const s = await sessionFileIndex(path, opts);
  const o = open(path, s);
  if (o === null) return wholeView(path, await readSession(path));
  const c = o.c;
  const read = (at: readonly number[]) => readEntries(path, o, at, s.recent);
  // On a stale read: rebuild and ask again (a fresh view), or read whole after one rebuild.
  const again = async <T>(fn: () => T, redo: (v: SessionView) => Promise<T>): Promise<T> => {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof StaleIndex)) throw e;
      if (!retried) await unlink(indexPath(path, opts.env)).catch(() => undefined); // gone already: the rebuild is all that was wanted
      return redo(retried ? wholeView(path, await readSession(path)) : await openSessionView(path, opts, true));
    }
  };
  let tree: SessionTree | null = null;
  const leafAt = (leafId?: string): number => {
    if (leafId === undefined) return o.leaf;
    const i = c.find(leafId);
    if (i < 0) return (tree ??= stubTree(c)).branch(leafId).length; // throws not_found as SessionTree does
    return i;
  };
  const positions = (leafId?: string) => {
    const leaf = leafAt(leafId);
    return leaf < 0 ? [] : branchAt(c, leaf);
  };
  return {
    path,
    header: o.header,
    leafId: o.leaf < 0 ? null : c.id(o.leaf),
    treeProblems: o.treeProblems,
    problems: o.problems,
    index: s,
    tree: () => (tree ??= stubTree(c)),
    context: (leafId) => again(() => indexedContext(read, c, o.header, positions(leafId)), (v) => v.context(leafId)),
    contextInfo: (leafId) => again(() => indexedInfo(read, c, o.header, positions(leafId)), (v) => v.contextInfo(leafId)),
    branch: (leafId) => again(() => read(positions(leafId)), (v) => v.branch(leafId)),
    labels: () => {
      const at: number[] = [];
      for (let i = 0; i < c.n; i++) if (c.kind[i] === KIND.label) at.push(i);
      return again(() => read(at), (v) => v.labels());
    },
    tailState: () => again(() => tailStateFromIndex(s, o.tailAt, (i) => read([i])[0]!, o.shape), (v) => v.tailState()),
  };
}
