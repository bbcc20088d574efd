// Writes an agent's lines into its mirror file: a new mirror with its header, else only the entries it lacks.
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { readSession } from '../store/session-reader.js';
import { appendEntries, createSessionFile } from '../store/session-writer.js';

/** Creates `mirror` (when `header` is given) or appends the entries it does not hold yet; returns how many were written. */
export async function writeMirror(mirror: string, header: SessionHeader | undefined, entries: SessionEntry[]): Promise<number> {
  if (header !== undefined) {
    await createSessionFile(mirror, header, entries);
    return entries.length;
  }
  const have = new Set((await readSession(mirror)).entries.map((e) => e.id));
  const fresh = entries.filter((e) => !have.has(e.id));
  if (fresh.length > 0) await appendEntries(mirror, fresh);
  return fresh.length;
}
