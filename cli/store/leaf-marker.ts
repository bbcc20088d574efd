// Keeps pi's leaf (the file's last entry) and sessync's leaf (the newest tip) the same entry, with a checkout marker.
import { CHECKOUT_CUSTOM_TYPE, type SessionEntry } from '../../shared/entry.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { completeEntries } from './new-entry.js';
import { appendWith, type AppendView } from './session-writer.js';
import { readHeader, type HeaderRead } from './session-reader.js';
import { readTailState } from './tail-state.js';

/**
 * Whose choice of branch a marker keeps when the two leaves differ:
 * - 'local': before a push. The last line was written here by a writer that is not sessync (pi, whose clock
 *   may lag or tie with another tip): it is where the user is, so the marker goes under it.
 * - 'merged': after a pull appended entries. The last line is a pulled one, and the newest tip over the
 *   union (the same on every machine) decides, so the marker goes under sessync's leaf.
 */
export type MarkerRule = 'local' | 'merged';

function leavesDiffer(view: Pick<AppendView, 'lastId' | 'leafId'>): boolean {
  return view.lastId !== null && view.leafId !== null && view.lastId !== view.leafId;
}

/** The marker to append, or none when pi and sessync already agree. */
export function leafMarker(view: AppendView, rule: MarkerRule): SessionEntry[] {
  if (!leavesDiffer(view)) return [];
  const target = rule === 'local' ? view.lastId : view.leafId;
  // Its timestamp is past every tip (nextTimestamp), so it is sessync's leaf; written last, it is pi's.
  return completeEntries(view, [{ type: 'custom', customType: CHECKOUT_CUSTOM_TYPE, parentId: target, data: { targetId: target, reason: rule === 'local' ? 'last-line' : 'merge' } }]);
}

/**
 * Appends the marker when needed, decided under the file's lock from the file as it is. Returns the marker, or
 * null. A file in an old format (not migrated yet) is left alone: the push that follows migrates it first.
 */
export async function alignLeaf(path: string, rule: MarkerRule, known?: HeaderRead): Promise<SessionEntry | null> {
  // This is pi's leaf rule: a session whose header names another agent keeps that agent's own (shared/agents).
  const h = known ?? (await readHeader(path)); // a caller that just read it passes it (one open less per push)
  if (h.ok && typeof h.header.agent === 'string' && h.header.agent !== 'pi') return null;
  // Most files need no marker: that is seen from the state read without the lock (as `list` reads it), and the lock
  // is taken only to write one, the choice made again under it from the file as it is then.
  const seen = await readTailState(path).catch((e: NodeJS.ErrnoException) => {
    throw e.code === 'ENOENT' ? new SessyncError('not_found', `session file ${path} does not exist`) : e; // as appendWith says it
  });
  if (!leavesDiffer(seen)) return null;
  try {
    const [m] = await appendWith(path, (view) => leafMarker(view, rule));
    return m ?? null;
  } catch (e) {
    if (isSessyncError(e, 'unsupported_version')) return null;
    throw e;
  }
}
