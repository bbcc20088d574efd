// Writes an agent's lines into its mirror file: a new mirror with its header, else only the entries it lacks.
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { readSession } from '../store/session-reader.js';
import { appendEntries, createSessionFile } from '../store/session-writer.js';

/**
 * Creates `mirror` (when `header` is given) or appends the entries it does not hold yet; returns how many were written.
 * `env`: the run's, whose SESSYNC_HOME keeps the mirror's tail state.
 */
export async function writeMirror(mirror: string, header: SessionHeader | undefined, entries: SessionEntry[], env: NodeJS.ProcessEnv): Promise<number> {
  if (header !== undefined) {
    await createSessionFile(mirror, header, entries, undefined, env);
    return entries.length;
  }
  const have = new Set((await readSession(mirror)).entries.map((e) => e.id));
  const fresh = entries.filter((e) => !have.has(e.id));
  if (fresh.length > 0) await appendEntries(mirror, fresh, { env });
  return fresh.length;
}
