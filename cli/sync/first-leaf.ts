// A first push's leaf check on the entries it read anyway: alignLeaf's locked pass over the file only when it has work.
import { CURRENT_VERSION, type SessionEntry } from '../../shared/entry.js';
import { stateOfWritten } from '../store/tail-state.js';
import type { FirstRead } from './read-slice.js';

/**
 * True when the file, as the push read it, needs no leaf marker: its last entry is also its newest tip (or the
 * session is another agent's, whose leaf rule is its own; alignLeaf leaves those alone too). False when this read
 * cannot tell (the file is not all in it, or not in the current format) or a marker is due: alignLeaf then decides,
 * under the file's lock, from the file as it is. The append cache alignLeaf would leave is not written here (a
 * write per session, a tenth of a first push's client time): the first append that needs it parses the file once.
 */
export function leafAgrees(path: string, first: FirstRead): boolean {
  const h = first.header;
  if (!h.ok) return false;
  if (typeof h.header.agent === 'string' && h.header.agent !== 'pi') return true;
  if (!first.whole || (h.header.version ?? 1) !== CURRENT_VERSION) return false;
  const entries = first.whole.entries;
  if (isChain(entries)) return true;
  // Branches: the tips as the append cache's own parse finds them (every line after the header is one of these).
  const state = stateOfWritten(path, h.header, entries, first.whole.data, first.mtimeMs);
  return state.lastId === null || state.leafId === null || state.lastId === state.leafId;
}

/**
 * Each entry the child of the one before it (the first's parent whatever it is): the file's one tip, if any, is its
 * last entry, so pi's leaf and sessync's are the same. The usual session, told apart without building the tips.
 */
function isChain(entries: readonly SessionEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) if (entries[i]!.parentId !== entries[i - 1]!.id) return false;
  return true;
}
