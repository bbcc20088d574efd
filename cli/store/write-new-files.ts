// New files written whole or not at all: each to a hidden temporary file beside it, fsynced, then all linked to their
// names; a failure anywhere removes what the call made (names, temporary files, folders) and says what failed.
import { link, open, rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { fsError, namingPath } from '../fs-error.js';
import { cannotFsyncFolder } from './folder-names.js';
import { missingFolders, mkdirTree } from './mkdir-tree.js';
import { PRIVATE_FILE } from './private-fs.js';
import { fsyncPath, writeTemp } from './session-writer.js';

/** link(2)'s errnos where the file system has no hard links (FAT/exFAT: EPERM; some mounts: ENOTSUP; FUSE: ENOSYS). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

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
      // Before the mkdir: the folders a failed mkdir may have made part of (none of them there before this call).
      const missing = missingFolders(dir);
      let made: string[];
      try {
        made = await mkdirTree(dir, dirMode);
      } catch (e) {
        folders.push(...missing);
        throw e;
      }
      folders.push(...made);
    }
    for (const f of files) {
      at = f.path;
      temps.push(await writeTemp(f.path, f.text)); // removes its temporary file itself when it fails
    }
    for (const [i, f] of files.entries()) {
      at = f.path;
      const linkedNow = await link(temps[i]!, f.path).then(
        () => true,
        (e: NodeJS.ErrnoException) => {
          if (e.code === 'EEXIST') throw new SessyncError('conflict', `${f.path} already exists`);
          if (NO_HARD_LINKS.has(e.code ?? '')) return false;
          throw e;
        },
      );
      if (linkedNow) linked.push(f.path);
      else await createWhole(temps[i]!, f, linked);
    }
    // The new names, and the names of the new folders in their parents, survive a crash. A folder this process can
    // never fsync (cannotFsyncFolder: not readable by it, no folder fsync on the platform) is passed over, as
    // session-writer's new files do: failing would refuse every import there and make nothing more durable.
    for (const dir of new Set([...files.map((f) => dirname(f.path)), ...folders.map((d) => dirname(d))])) {
      at = dir;
      await fsyncPath(dir).catch((e: unknown) => {
        if (!cannotFsyncFolder(e)) throw e;
      });
    }
  } catch (e) {
    const left = await undo(linked, temps, folders);
    throw failure(namingPath(e, at), left);
  }
  // Every name is linked to its temporary file's data (or written whole): one left behind holds no data that is not
  // in the new file, takes no space of its own, and is a hidden name no agent reads.
  await removeTemps(temps);
}

/**
 * `f` created by its name where the file system has no hard links: its temporary file removed first (it would be a
 * second copy), then the name made exclusively ('wx', as a conflict still is), written whole (short writes looped)
 * and fsynced. The name joins `linked` as soon as it exists, so a failure after that removes it.
 */
async function createWhole(temp: string, f: NewFile, linked: string[]): Promise<void> {
  await unlink(temp).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
  const fh = await open(f.path, 'wx', PRIVATE_FILE).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'EEXIST') throw new SessyncError('conflict', `${f.path} already exists`);
    throw e;
  });
  linked.push(f.path);
  try {
    await fh.writeFile(f.text); // writes until all of it is there, as writeTemp's does
    await fh.sync();
  } catch (e) {
    // The write's error is the one to report; the file is removed by the undo whether or not this close works.
    await fh.close().catch(() => undefined);
    throw namingPath(e, f.path);
  }
  await fh.close();
}

/** Removes what a failed call made; returns what could not be removed (said to the user, never hidden). */
async function undo(linked: string[], temps: string[], folders: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const p of [...linked].reverse()) if (!(await removed(() => unlink(p), ['ENOENT']))) left.push(p);
  left.push(...(await removeTemps(temps)));
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

/** Removes the temporary names; returns those that could not be removed (one already gone is not left). */
async function removeTemps(temps: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const t of temps) if (!(await removed(() => unlink(t), ['ENOENT']))) left.push(t);
  return left;
}

/**
 * The error the caller sees: an fs error as a SessyncError naming its path, saying that nothing was written or naming
 * every file and folder left. Any other error (a bug) with something left becomes `internal`, naming what is left.
 */
function failure(e: unknown, left: string[]): unknown {
  const err = fsError(e);
  const rest = left.length === 0 ? '; nothing was written' : `; some of what was written could not be removed: ${left.join(', ')} (remove these by hand)`;
  if (isSessyncError(err)) return new SessyncError(err.code, `${err.message}${rest}`, { retryable: err.retryable, details: err.details, cause: err.cause ?? e });
  if (left.length === 0) return err;
  return new SessyncError('internal', `${err instanceof Error ? err.message : String(err)}${rest}`, { cause: err });
}
