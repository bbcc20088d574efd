// Opens a session for resume, context, log and share: from its index, reading only the entries asked for, or whole when the index cannot serve it.
import { closeSync, openSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { buildContext, contextOfBranch, type SessionContext } from '../../shared/context.js';
import { checkEntry, checkHeader, type SessionEntry, type SessionHeader } from '../../shared/entry.js';
import { splitJsonValues, type Problem } from '../../shared/jsonl.js';
import { SessionTree } from '../../shared/tree.js';
import { ENTRY_KINDS, KIND, type IndexState, type IndexedEntry } from './session-file-index-codec.js';
import { clip, decode, indexPath, kindOf, readAt, sessionFileIndex } from './session-file-index.js';
import { readSession } from './session-reader.js';
import { tailStateFromIndex } from './session-file-index-tail.js';
import type { TailState } from './tail-state.js';

/** What the commands that continue or show one branch need of a session. */
export interface SessionView {
  path: string;
  header: SessionHeader;
  /** Every entry's place in the tree. From the index its entries carry only id, parentId, timestamp and type. */
  tree: SessionTree;
  /** Lines not loaded, as the full reader reports them. */
  problems: Problem[];
  /** The index this view reads from; null when the file was read whole. */
  index: IndexState | null;
  /** The context projection of the branch ending at leafId (default: the leaf). */
  context(leafId?: string): Promise<SessionContext>;
  /** Whole entries, root to leafId (default: the leaf). */
  branch(leafId?: string): Promise<SessionEntry[]>;
  /** Whole label entries, in file order. */
  labels(): Promise<SessionEntry[]>;
  /** The append cache as the index gives it for free; null when the file was read whole (the cache reads it then). */
  tailState(): Promise<TailState | null>;
}

/** An entry line no longer says what the index recorded: the file changed under the index since it was checked. */
class StaleIndex extends Error {}

const NL = 0x0a;
/** Lines this close together are read in one call (one read beats many for a branch stored in order). */
const MAX_GAP = 64 << 10;
const MAX_SPAN = 8 << 20;

/** Opened from the index; null when the index does not serve this file (the caller reads it whole). */
interface Indexed {
  header: SessionHeader;
  tree: SessionTree;
  problems: Problem[];
  /** A last line without its newline that parses: not indexed (it may still grow), kept whole here. */
  tail: SessionEntry | null;
}

function fromIndex(path: string, s: IndexState): Indexed | null {
  if (s.unsupported !== null || s.headerEnd === 0) return null;
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
    let stubs: readonly IndexedEntry[] = s.entries;
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
            const kind = kindOf(tail);
            stubs = [...s.entries, { id: tail.id, parentId: tail.parentId, timestamp: tail.timestamp, kind, type: ENTRY_KINDS[kind]!, line, offset: s.covered, length: b.length }];
          }
        }
      }
    }
    const tree = SessionTree.from(stubs);
    // Two lines with one id: the full reader compares their content to word its problem, so it reads them.
    if (tree.size !== stubs.length) return null;
    return { header, tree, problems, tail };
  } finally {
    closeSync(fd);
  }
}

/** Whole entries for index entries, in the order given; neighbouring lines are read together. Throws StaleIndex. */
function readEntries(path: string, s: IndexState, tail: SessionEntry | null, stubs: readonly IndexedEntry[]): SessionEntry[] {
  const out: SessionEntry[] = new Array(stubs.length);
  const order = stubs.map((_, i) => i).sort((a, b) => stubs[a]!.offset - stubs[b]!.offset);
  const fd = openSync(path, 'r');
  try {
    for (let k = 0; k < order.length; ) {
      const first = stubs[order[k]!]!;
      if (first.offset >= s.covered) {
        out[order[k++]!] = tail!;
        continue;
      }
      let end = first.offset + first.length;
      let j = k + 1;
      for (; j < order.length; j++) {
        const e = stubs[order[j]!]!;
        if (e.offset >= s.covered || e.offset - end > MAX_GAP || e.offset + e.length - first.offset > MAX_SPAN) break;
        end = Math.max(end, e.offset + e.length);
      }
      const b = readAt(fd, first.offset, end + 1);
      for (; k < j; k++) {
        const e = stubs[order[k]!]!;
        const at = e.offset - first.offset;
        if (b[at + e.length] !== NL) throw new StaleIndex();
        let v: SessionEntry;
        try {
          v = JSON.parse(decode(b, at, at + e.length)) as SessionEntry;
        } catch {
          throw new StaleIndex();
        }
        if (checkEntry(v) !== null || v.id !== e.id || v.parentId !== e.parentId || v.timestamp !== e.timestamp) throw new StaleIndex();
        out[order[k]!] = v;
      }
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

const IN_CONTEXT = new Set<number>([KIND.message, KIND.assistantModel, KIND.customMessage, KIND.branchSummary]);

/**
 * The context projection reading only what it needs: the latest compaction, model source and thinking-level change
 * on the branch, the compaction's first kept entry, and the entries it puts in context after that.
 */
function indexedContext(read: (stubs: readonly IndexedEntry[]) => SessionEntry[], header: SessionHeader, path: readonly IndexedEntry[]): SessionContext {
  let comp = -1;
  let think = -1;
  let model = -1;
  for (let i = 0; i < path.length; i++) {
    const k = path[i]!.kind;
    if (k === KIND.compaction) comp = i;
    else if (k === KIND.thinking) think = i;
    else if (k === KIND.model || k === KIND.assistantModel) model = i;
  }
  let kept = -1;
  let from = 0;
  const need = new Set<number>();
  if (comp >= 0) {
    const c = read([path[comp]!])[0]!;
    for (let i = 0; i < comp; i++) {
      if (path[i]!.id === c.firstKeptEntryId) {
        kept = i;
        break;
      }
    }
    from = kept >= 0 ? kept : comp;
    need.add(comp);
  }
  if (think >= 0) need.add(think);
  if (model >= 0) need.add(model);
  for (let i = from; i < path.length; i++) if (IN_CONTEXT.has(path[i]!.kind)) need.add(i);
  const at = [...need].sort((a, b) => a - b);
  const full = read(at.map((i) => path[i]!));
  const byPos = new Map(at.map((i, k) => [i, full[k]!]));
  if (kept >= 0 && !byPos.has(kept)) {
    const e = path[kept]!;
    byPos.set(kept, { type: '', id: e.id, parentId: e.parentId, timestamp: e.timestamp }); // matched by id only
  }
  const trimmed = [...byPos.keys()].sort((a, b) => a - b).map((i) => byPos.get(i)!);
  return contextOfBranch(trimmed, header);
}

function wholeView(path: string, s: Awaited<ReturnType<typeof readSession>>): SessionView {
  return {
    path,
    header: s.header,
    tree: s.tree,
    problems: s.problems,
    index: null,
    context: async (leafId) => buildContext(s.tree, { leafId, header: s.header }),
    branch: async (leafId) => s.tree.branch(leafId),
    labels: async () => s.tree.entries.filter((e) => e.type === 'label'),
    tailState: async () => null,
  };
}

/**
 * The session at `path`, from its index (built or brought up to date first) when the index serves it, else read
 * whole. An entry line that no longer matches its record (the file changed between the check and the read) makes
 * the index be rebuilt once; after that the file is read whole.
 */
export async function openSessionView(path: string, retried = false): Promise<SessionView> {
  const s = await sessionFileIndex(path);
  const o = fromIndex(path, s);
  if (o === null) return wholeView(path, await readSession(path));
  const read = (stubs: readonly IndexedEntry[]) => readEntries(path, s, o.tail, stubs);
  // On a stale read: rebuild and ask again (a fresh view), or read whole after one rebuild.
  const again = async <T>(fn: () => T, redo: (v: SessionView) => Promise<T>): Promise<T> => {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof StaleIndex)) throw e;
      if (!retried) await unlink(indexPath(path)).catch(() => undefined); // gone already: the rebuild is all that was wanted
      return redo(retried ? wholeView(path, await readSession(path)) : await openSessionView(path, true));
    }
  };
  const stubBranch = (leafId?: string) => o.tree.branch(leafId) as IndexedEntry[];
  return {
    path,
    header: o.header,
    tree: o.tree,
    problems: o.problems,
    index: s,
    context: (leafId) => again(() => indexedContext(read, o.header, stubBranch(leafId)), (v) => v.context(leafId)),
    branch: (leafId) => again(() => read(stubBranch(leafId)), (v) => v.branch(leafId)),
    labels: () => again(() => read((o.tree.entries as IndexedEntry[]).filter((e) => e.kind === KIND.label)), (v) => v.labels()),
    tailState: () => again(() => tailStateFromIndex(s, (e) => read([e])[0]!), (v) => v.tailState()),
  };
}
