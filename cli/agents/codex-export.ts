// Codex's folders and a new rollout file written where Codex looks for it: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl.
import { codex } from '../../shared/agents/codex.js';
import { SessyncError } from '../../shared/errors.js';
import { writeNewFiles } from '../store/write-new-files.js';

export { codexHome, codexSessionsRoot } from './codex-paths.js';

/**
 * The path of a rollout started at `at`, relative to the sessions folder. Codex names both the date folder and the file
 * by local time (its own rollouts do); `codex resume` finds a rollout by the uuid in its name in any date folder.
 */
export function rolloutRel(id: string, at: Date): string {
  return codex.mainFile(id, at.toISOString());
}

/**
 * Writes a new rollout with these lines, all or nothing: the text goes to a hidden temporary file in the same folder
 * (`.<file>.<pid>.<random>.tmp`: not a rollout name, so no Codex scan reads it), is fsynced, then linked to its name
 * (which fails rather than replace an existing file). Codex never sees a partial rollout, and a failure (a full disk)
 * leaves neither the rollout nor a date folder made for it. Date folders get Codex's usual mode (no dirMode).
 */
export async function writeNewRollout(path: string, lines: readonly string[]): Promise<void> {
  for (const l of lines) if (l.includes('\n')) throw new SessyncError('bad_input', 'a rollout line cannot hold a newline; nothing was written');
  await writeNewFiles([{ path, text: lines.map((l) => `${l}\n`).join('') }]);
}
