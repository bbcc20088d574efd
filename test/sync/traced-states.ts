// Which sessions' states a traced write (strace -y, strings uncut) of the journal, the state pack or a session's own state file claims something for.
import type { Cursor } from '../../shared/wire.js';

/** Text as strace prints it inside a written string: `\` as `\\`, `"` as `\"`. */
const asTraced = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');

/**
 * The sessions among `ids` that a state record in this write claims something for (entries the file holds, a file to
 * be found), one record a line of the written text. Passed over, as claiming nothing: a forgotten state, and a pull's
 * note of a request under way (`pulling`) that carries the cursor the session had before the run (`before`; none
 * given: the session was not here, its cursor empty). That note is written before each pull request, and what the
 * request brings is claimed only by the states saved after it.
 */
export function sessionsClaimed(line: string, ids: readonly string[], before: ReadonlyMap<string, Cursor> = new Map()): string[] {
  const records = line.split('\\n');
  const noteOnly = (r: string, id: string) => r.includes('\\"pulling\\":{') && r.includes(`\\"cursor\\":${asTraced(JSON.stringify(before.get(id) ?? {}))}`);
  return ids.filter((id) => records.some((r) => r.includes(id) && !r.includes('{\\"forget\\":') && !noteOnly(r, id)));
}
