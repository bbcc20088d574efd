// The append cache (tail state) of a session derived from its index, so a first resume does not parse the whole file a second time.
import { closeSync, openSync } from 'node:fs';
import type { SessionEntry } from '../../shared/entry.js';
import { nullRecord } from '../../shared/own-keys.js';
import { KIND, type IndexState } from './session-file-index-codec.js';
import { tailHashAt } from './session-file-index.js';
import { emptyState, pickLeaf, type TailState } from './tail-state.js';

/**
 * What tailStateOf would compute from the file the index describes, replaying its rule (addEntry) on the columns:
 * complete lines only (`end`: the first position not to count), tips, pending parents, bad lines, and the name
 * from the last named session_info, the one entry read (`read` returns it whole). The index holds no parent
 * written after its child, so no entry's id is ever pending when it arrives.
 */
export function tailStateFromIndex(s: IndexState, end: number, read: (i: number) => SessionEntry): TailState {
  const c = s.entries;
  const n = end >= 0 ? end : c.n;
  const t = emptyState(s.path);
  t.headerId = s.headerId;
  t.version = s.version;
  const childSeen = new Uint8Array(n);
  const pending = new Set<string>();
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
    if (k === KIND.message || k === KIND.assistantModel) t.messageCount++;
    else if (k === KIND.sessionName) named = i;
  }
  const tips = nullRecord<string>();
  for (let i = 0; i < n; i++) if (!childSeen[i]) tips[c.id(i)] = c.timestamp(i);
  t.tips = tips;
  t.pending = [...pending];
  t.leafId = pickLeaf(tips);
  t.lastId = n > 0 ? c.id(n - 1) : null;
  t.entryCount = n;
  if (named >= 0) t.name = read(named).name as string;
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
