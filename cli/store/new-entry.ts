// Fills what a new entry may leave out (id, parent, timestamp) so that the entries appended become the leaf.
import type { SessionEntry } from '../../shared/entry.js';
import { newId } from '../../shared/ids.js';
import { setOwn } from '../../shared/own-keys.js';
import { appendWith } from './session-writer.js';
import type { AppendView } from './session-writer.js';
import { ensureCurrent } from './migrate-file.js';
import { migrationNote } from '../format/resume-text.js';

/**
 * Now, or just after the newest tip when a clock elsewhere (another synced machine) ran ahead: the leaf rule
 * picks the newest tip, so an entry appended "at the leaf" must not be older than the tips it competes with.
 */
export function nextTimestamp(view: AppendView, after?: string): string {
  let t = Date.now();
  for (const id in view.tips) {
    const tip = Date.parse(view.tips[id]!);
    if (tip >= t) t = tip + 1;
  }
  if (after !== undefined) {
    const a = Date.parse(after);
    if (a >= t) t = a + 1;
  }
  return new Date(t).toISOString();
}

/**
 * Completes entries in order: a missing id gets a UUIDv7, a missing timestamp a fresh one, a missing parentId
 * the previous entry of this batch (the first: `firstParent`, default the leaf). An explicit `parentId: null` stays.
 */
export function completeEntries(view: AppendView, partial: Record<string, unknown>[], firstParent?: string): SessionEntry[] {
  const out: SessionEntry[] = [];
  let prev: SessionEntry | undefined;
  for (const p of partial) {
    const e: Record<string, unknown> = { ...p };
    // Field order as pi writes it: type, id, parentId, timestamp, then the rest.
    const ordered: Record<string, unknown> = {
      type: e.type,
      id: typeof e.id === 'string' ? e.id : newId(),
      parentId: Object.hasOwn(e, 'parentId') ? e.parentId : prev ? prev.id : (firstParent ?? view.leafId),
      timestamp: typeof e.timestamp === 'string' ? e.timestamp : nextTimestamp(view, prev?.timestamp),
    };
    // Own keys only: a field called `constructor` or `__proto__` is content, kept like any other.
    for (const k of Object.keys(e)) if (!Object.hasOwn(ordered, k)) setOwn(ordered, k, e[k]);
    prev = ordered as SessionEntry;
    out.push(prev);
  }
  return out;
}

/**
 * Brings the file to the current format (an old one is migrated, original kept as .bak) and appends the entries,
 * completed under the lock. `note` receives the migration message.
 */
export async function appendCompleted(
  path: string,
  partial: Record<string, unknown>[],
  opts: { firstParent?: string; note?: (text: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<SessionEntry[]> {
  const migrated = await ensureCurrent(path, opts.env);
  if (migrated?.changed) opts.note?.(migrationNote(migrated));
  return appendWith(path, (view) => completeEntries(view, partial, opts.firstParent), opts.env ? { env: opts.env } : {});
}
