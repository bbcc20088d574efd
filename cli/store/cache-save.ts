// Cache saves that must not fail the command they serve: a file-system error is noted once per cache and passed over.
import { isErrnoError } from '../fs-error.js';

/** What could not be saved this run, one line per cache kind, for the command's end (see takeCacheNotes). */
const notes = new Map<string, string>();

/**
 * Awaits `save`, a cache's write (the append cache, the list cache). A full disk, a read-only or unwritable home
 * (any errno) must not stop a `list`, `resume` or `append` that never needed the cache: the next reader finds the
 * cache behind its file and reads what is new. Noted, not hidden: the command says it once at its end. Any other
 * error (a bug) still throws.
 */
export async function saveCache(what: string, save: Promise<void>): Promise<void> {
  try {
    await save;
  } catch (e) {
    if (!isErrnoError(e)) throw e;
    if (!notes.has(what)) notes.set(what, `could not save the ${what} cache (${e.code}: ${e.path ?? 'a file'}); nothing is lost, the next run reads the session files again`);
  }
}

/** The notes of caches that could not be saved, each once; cleared. */
export function takeCacheNotes(): string[] {
  const out = [...notes.values()];
  notes.clear();
  return out;
}
