// Files written atomically (temp + rename): a reader sees the old or the new file, never half of one.
import { open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PRIVATE_FILE, mkdirPrivate } from './private-fs.js';
import { namingPath } from '../fs-error.js';

/** Atomic, not durable (no fsync): what a crash loses is rebuilt or asked for again. */
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const text = JSON.stringify(value);
  await tempRemovedOnFailure(tmp, async () => {
    try {
      await writeFile(tmp, text, { mode: PRIVATE_FILE });
    } catch (e) {
      // The folder is made when missing, not asked for first: a run that saves 1,000 caches in one folder makes it once.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      await mkdirPrivate(dirname(file));
      await writeFile(tmp, text, { mode: PRIVATE_FILE });
    }
    await rename(tmp, file);
  });
}

/**
 * Runs `write`, which makes `tmp` and renames it over its file; when it fails (a full disk mid-write), `tmp` is removed:
 * the file keeps its old bytes either way, and a half-written temp left behind would only fill the disk further.
 */
async function tempRemovedOnFailure(tmp: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (e) {
    // Not there (never made) or not removable: the error that matters is the write's, and tmp holds no only copy.
    await unlink(tmp).catch(() => undefined);
    throw namingPath(e, tmp);
  }
}

/** The file's text, or null when it does not exist (any other failure is thrown). */
export async function readTextIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The parsed file, or null when it is missing or unreadable (a cache: the caller rebuilds). */
export async function readJsonOrNull<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/**
 * Durable and private: temp file created 0600 (a token is never readable by others, even for a moment),
 * fsync, rename. The folder is not fsynced: after a power cut the old file (or none) may come back, which every
 * caller tolerates. Sync state: a batch resent (a seq the server holds is answered as a conflict and the push goes on
 * after the server's head; entries merge by id) or entries re-pulled (merged by id, nothing appended twice); a state
 * with no file of its session never reads as deleted here while the session's id is found on disk (droppedSessions).
 * host.json: a new host id, which the server and the other machines take as one more machine, losing nothing.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, o: { durable?: boolean } = {}): Promise<void> {
  await mkdirPrivate(dirname(path));
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fh = await open(tmp, 'w', PRIVATE_FILE);
  await tempRemovedOnFailure(tmp, async () => {
    try {
      await fh.writeFile(data);
      // durable: false, for a cache whose loss only costs asking again: the rename still makes it whole or absent to
      // a reader while the machine runs; after a crash it may read as empty or damaged, which its reader takes as none.
      if (o.durable !== false) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  });
}
