// The append cache (tail state) of a session derived from its index, so a first resume does not parse the whole file a second time.
import { closeSync, openSync } from 'node:fs';
import type { SessionEntry } from '../../shared/entry.js';
import { nullRecord } from '../../shared/own-keys.js';
import { KIND, type EntryColumns, type IndexState } from './session-file-index-codec.js';
import { tailHashAt } from './session-file-index.js';
import { emptyState, pickLeaf, type TailState } from './tail-state.js';

/**
 * What one pass over the first n entries of the columns tells: which have a child (so the tips), the parents named
 * a second time or not in the columns (the tail state's pending), the messages and the last session name. The leaf
 * rule and the append cache both start from it, so a first open walks every entry once for both.
 */
export interface ColumnShape {
  n: number;
  /** Positions with no child, in file order. */
  tips: number[];
  pending: Set<string>;
  messageCount: number;
  /** The last named session_info, or -1. */
  named: number;
}

export function shapeOf(c: EntryColumns, n: number): ColumnShape {
  const childSeen = new Uint8Array(n);
  const pending = new Set<string>();
  let messageCount = 0;
  let named = -1;
  for (let i = 0; i < n; i++) {
    const p = c.parent[i]!;
    if (p >= 0) {
      if (childSeen[p]) pending.add(c.id(p));
      childSeen[p] = 1;
    } else if (c.parentText.has(i)) {
      pending.add(c.parentText.get(i)!);
    }
    const k = c.kind[i]!;
    if (k === KIND.message || k === KIND.assistantModel) messageCount++;
    else if (k === KIND.sessionName) named = i;
  }
  // The typed array's own search finds the few tips (in script this would be a second pass over every entry).
  const tips: number[] = [];
  for (let i = childSeen.indexOf(0); i >= 0; i = childSeen.indexOf(0, i + 1)) tips.push(i);
  return { n, tips, pending, messageCount, named };
}

/**
 * What tailStateOf would compute from the file the index describes, replaying its rule (addEntry) on the columns:
 * complete lines only (`end`: the first position not to count), tips, pending parents, bad lines, and the name
 * from the last named session_info, the one entry read (`read` returns it whole). The index holds no parent
 * written after its child, so no entry's id is ever pending when it arrives. `shape`: shapeOf those entries, when
 * the caller has it.
 */
export function tailStateFromIndex(s: IndexState, end: number, read: (i: number) => SessionEntry, shape?: ColumnShape): TailState {
  const c = s.entries;
  const n = end >= 0 ? end : c.n;
  const t = emptyState(s.path);
  t.headerId = s.headerId;
  t.version = s.version;
  const sh = shape !== undefined && shape.n === n ? shape : shapeOf(c, n);
  t.messageCount = sh.messageCount;
  const tips = nullRecord<string>();
  for (const i of sh.tips) tips[c.id(i)] = c.timestamp(i);
  t.tips = tips;
  t.pending = [...sh.pending];
  t.leafId = pickLeaf(tips);
  t.lastId = n > 0 ? c.id(n - 1) : null;
  // The columns do not tell an agent's line from other types (KIND.other): with such an entry the agents' newest time
  // is not known (list then reads the file's tail); without one there is no agent line, and emptyState's null holds.
  if (c.kind.subarray(0, n).includes(KIND.other)) delete t.newestTimedAt;
  t.entryCount = n;
  if (sh.named >= 0) t.name = read(sh.named).name as string;
  t.badLines = s.problems.length;
  t.offset = s.covered;
  t.size = s.size;
  t.mtimeMs = s.mtimeMs;
  const fd = openSync(s.path, 'r');
  try {
    t.tailHash = tailHashAt(fd, s.size); // the tail state hashes the bytes before the file's end, not before the last line
  } finally {
    closeSync(fd);
  }
  return t;
}
