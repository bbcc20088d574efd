// New files written whole or not at all: each to a hidden temporary file beside it, fsynced, then all linked to their
// names; a failure anywhere removes what the call made (names, temporary files, folders) and says what failed.
import { link, rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { fsError, namingPath } from '../fs-error.js';
import { missingFolders, mkdirTree } from './mkdir-tree.js';
import { fsyncPath, writeTemp } from './session-writer.js';

export interface NewFile {
  path: string;
  text: string;
}

/**
 * Writes `files`, none over an existing one: all of them, or (a full disk, a read-only mount, a name taken) none, and
 * no folder the call made is left. Folders are made with `dirMode` (Node's default, under the umask, when none: an
 * agent's folders keep the mode they have always had); files are 0600. Names are linked in the order given, so a
 * reader that waits for the last one (a session's main file) finds the others whole. A failure is a SessyncError:
 * an fs_* code naming the file or folder (a full disk: fs_full, retryable), or conflict when a name is taken.
 */
export async function writeNewFiles(files: readonly NewFile[], dirMode?: number): Promise<void> {
  const folders: string[] = []; // missing before this call: made by it (or by its mkdir before it failed)
  const temps: string[] = [];
  const linked: string[] = [];
  let at = files[0]?.path ?? ''; // what is being written: an error on a descriptor names no path
  try {
    for (const dir of new Set(files.map((f) => dirname(f.path)))) {
      at = dir;
      folders.push(...missingFolders(dir));
      await mkdirTree(dir, dirMode);
    }
    for (const f of files) {
      at = f.path;
      temps.push(await writeTemp(f.path, f.text)); // removes its temporary file itself when it fails
    }
    for (const [i, f] of files.entries()) {
      at = f.path;
      await link(temps[i]!, f.path).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'EEXIST') throw new SessyncError('conflict', `${f.path} already exists; nothing was written`);
        throw e;
      });
      linked.push(f.path);
    }
    // The new names, and the names of the new folders in their parents, survive a crash.
    for (const dir of new Set([...files.map((f) => dirname(f.path)), ...folders.map((d) => dirname(d))])) {
      at = dir;
      await fsyncPath(dir);
    }
  } catch (e) {
    const left = await undo(linked, temps, folders);
    throw failure(namingPath(e, at), left);
  }
  await removeTemps(temps);
}

/** Removes what a failed call made; returns what could not be removed (said to the user, never hidden). */
async function undo(linked: string[], temps: string[], folders: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const p of [...linked].reverse()) if (!(await removed(() => unlink(p), ['ENOENT']))) left.push(p);
  await removeTemps(temps);
  // Deepest first (a folder's path is longer than its parent's). One that holds something now is not only this
  // call's (another program wrote there meanwhile): it stays, and is not reported.
  for (const d of [...folders].sort((a, b) => b.length - a.length)) if (!(await removed(() => rmdir(d), ['ENOENT', 'ENOTEMPTY', 'EEXIST']))) left.push(d);
  return left;
}

/** Runs a removal; whether it did it, or found one of the `fine` errnos (nothing of this call's left there). */
async function removed(remove: () => Promise<void>, fine: readonly string[]): Promise<boolean> {
  try {
    await remove();
    return true;
  } catch (e) {
    return fine.includes((e as NodeJS.ErrnoException).code ?? '');
  }
}

/** The temporary names: gone once linked (or never linked). One that cannot be removed holds nothing that is not also elsewhere. */
async function removeTemps(temps: string[]): Promise<void> {
  // A leftover is a hidden `.<name>.<pid>.<random>.tmp` no agent reads; its text is in the linked file or was not imported.
  for (const t of temps) await unlink(t).catch(() => undefined);
}

/** The error the caller sees: an fs error as a SessyncError naming its path, saying that nothing was written (or what is left). */
function failure(e: unknown, left: string[]): unknown {
  const err = fsError(e);
  if (!isSessyncError(err)) return err;
  const rest = left.length === 0 ? (err.code === 'conflict' ? '' : '; nothing was written') : `; could not remove what was written: ${left.join(', ')} (remove it by hand)`;
  if (rest === '') return err;
  return new SessyncError(err.code, `${err.message}${rest}`, { retryable: err.retryable, details: err.details, cause: err.cause ?? e });
}
