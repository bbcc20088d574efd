// Codex's folders and a new rollout file written where Codex looks for it: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl.
import { link, mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { codex } from '../../shared/agents/codex.js';
import { SessyncError } from '../../shared/errors.js';
import { fsyncPath, writeTemp } from '../store/session-writer.js';

export { codexHome, codexSessionsRoot } from './codex-paths.js';

/**
 * The path of a rollout started at `at`, relative to the sessions folder. Codex names both the date folder and the file
 * by local time (its own rollouts do); `codex resume` finds a rollout by the uuid in its name in any date folder.
 */
export function rolloutRel(id: string, at: Date): string {
  return codex.mainFile(id, at.toISOString());
}

/**
 * Writes a new rollout with these lines, all or nothing: the text goes to a hidden temporary file in the same folder,
 * is fsynced, then linked to its name (which fails rather than replace an existing file). Codex never sees a partial
 * rollout.
 */
export async function writeNewRollout(path: string, lines: readonly string[]): Promise<void> {
  for (const l of lines) if (l.includes('\n')) throw new SessyncError('bad_input', 'a rollout line cannot hold a newline; nothing was written');
  await mkdir(dirname(path), { recursive: true });
  // Named `.<file>.<pid>.<random>.tmp`: not a rollout name, so no Codex scan reads it.
  const tmp = await writeTemp(path, lines.map((l) => `${l}\n`).join(''));
  try {
    await link(tmp, path).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'EEXIST') throw new SessyncError('conflict', `${path} already exists; nothing was written`);
      throw e;
    });
    await fsyncPath(dirname(path)); // the new name survives a crash
  } finally {
    await unlink(tmp).catch(() => undefined); // the temporary name only; the rollout (if linked) stays
  }
}
