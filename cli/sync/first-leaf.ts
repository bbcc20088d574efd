// A first push's leaf check from its one read of the file: alignLeaf's locked pass over the file only when it has work.
import { CURRENT_VERSION } from '../../shared/entry.js';
import type { FirstRead } from './read-slice.js';

/**
 * True when the file, as the push read it, needs no leaf marker: a chain, whose last entry is its one tip (or the
 * session is another agent's, whose leaf rule is its own; alignLeaf leaves those alone too). False when this read
 * cannot tell (branches, the file not all in it, not the current format): alignLeaf then decides, under the file's
 * lock, from the file as it is. The append cache alignLeaf's pass leaves is not written for a chain (a write per
 * session, a tenth of a first push's client time): the first append that needs it parses the file once.
 */
export function leafAgrees(first: FirstRead): boolean {
  const h = first.header;
  if (!h.ok) return false;
  if (typeof h.header.agent === 'string' && h.header.agent !== 'pi') return true;
  return first.wholeChain && (h.header.version ?? 1) === CURRENT_VERSION;
}
