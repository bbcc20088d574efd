// The append cache (tail state) of a session derived from its index, so a first resume does not parse the whole file a second time.
import { closeSync, openSync } from 'node:fs';
import type { SessionEntry } from '../../shared/entry.js';
import { KIND, type IndexState } from './session-file-index-codec.js';
import { tailHashAt } from './session-file-index.js';
import { addEntry, emptyState, pickLeaf, type TailState } from './tail-state.js';

/**
 * What tailStateOf would compute from the file the index describes: the tips replayed over the indexed entries
 * (complete lines only, as the tail state counts them), the bad lines, and the name from the last named
 * session_info, the one entry read. `readNamed` returns that entry whole.
 */
export function tailStateFromIndex(s: IndexState, readNamed: (e: IndexState['entries'][number]) => SessionEntry): TailState {
  const t = emptyState(s.path);
  t.headerId = s.headerId;
  t.version = s.version;
  const pending = new Set<string>();
  let named: IndexState['entries'][number] | null = null;
  for (const e of s.entries) {
    addEntry(t, e, pending);
    if (e.kind === KIND.sessionName) named = e;
  }
  if (named !== null) t.name = readNamed(named).name as string;
  t.pending = [...pending];
  t.leafId = pickLeaf(t.tips);
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
