// Cache saves that must not fail the command they serve: a file-system error is noted once per cache and passed over.
import { isErrnoError } from '../fs-error.js';

/** What could not be saved and is not said yet, one line per cache kind (see takeCacheNotes). */
const notes = new Map<string, string>();
/** Cache kinds already noted in this process: a watcher saying it every cycle would drown its other lines. */
const said = new Set<string>();
/** Whether the command prints JSON (its notes then go on stderr as JSON lines); set by the CLI's entry. */
let jsonNotes = false;

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
    if (said.has(what)) return;
    said.add(what);
    notes.set(what, `could not save the ${what} cache (${e.code}: ${e.path ?? 'a file'}); nothing is lost, the next run reads the session files again`);
  }
}

/** The notes of caches that could not be saved, each once; cleared. */
export function takeCacheNotes(): string[] {
  const out = [...notes.values()];
  notes.clear();
  return out;
}

/** Notes from here on are for a command printing JSON (`--json`) or not. */
export function setJsonNotes(json: boolean): void {
  jsonNotes = json;
}

/** A note as the command's stderr line: `sessync: note: ...`, or with --json a `{"note":{message}}` line. */
export function noteLine(message: string): string {
  return jsonNotes ? JSON.stringify({ note: { message } }) + '\n' : `sessync: note: ${message}\n`;
}
