// Codex's folders, and a new rollout written whole where Codex looks for it ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl).
import { link, mkdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { codex } from '../../shared/agents/codex.js';
import { SessyncError } from '../../shared/errors.js';
import { fsyncPath, writeTemp } from '../store/session-writer.js';

/** $CODEX_HOME, else ~/.codex (HOME as given: a test's own environment is never mixed with the real one). */
export function codexHome(env: NodeJS.ProcessEnv): string {
  const dir = env.CODEX_HOME || join(env.HOME || env.USERPROFILE || '.', '.codex');
  return dir.replace(/[\\/]+$/, '');
}

export function codexSessionsRoot(env: NodeJS.ProcessEnv): string {
  return codex.sessionsRoot({ ...env, CODEX_HOME: codexHome(env) }, '');
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
