// Migrates an old session file on disk: the new text to a temp file, fsync, rename over; the original kept as `<file>.bak`.
import { chmod, copyFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { CURRENT_VERSION } from '../../shared/entry.js';
import { serializeSession } from '../../shared/jsonl.js';
import { parseSessionFile } from './parse-file.js';
import type { Problem } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { SessyncError } from '../../shared/errors.js';
import { withFileLock } from './file-lock.js';
import { fsyncPath, writeTemp } from './session-writer.js';
import { readHeader } from './session-reader.js';
import { readTailState } from './tail-state.js';
import { PRIVATE_FILE } from './private-fs.js';

export interface MigrateResult {
  path: string;
  fromVersion: number;
  toVersion: number;
  changed: boolean;
  /** Where the original was kept (only when changed). */
  backup?: string;
  /** Lines of the original that could not be carried over (they stay in the backup). */
  problems: Problem[];
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** `<file>.bak`, or `<file>.<n>.bak` when an earlier migration's backup is already there (never overwritten). */
async function backupPath(path: string): Promise<string> {
  if (!(await exists(`${path}.bak`))) return `${path}.bak`;
  for (let n = 2; ; n++) if (!(await exists(`${path}.${n}.bak`))) return `${path}.${n}.bak`;
}

/** Brings a session file to the current format version in place; a current file is left untouched. */
export async function migrateFile(path: string, env: NodeJS.ProcessEnv = process.env): Promise<MigrateResult> {
  return withFileLock(path, async () => {
    const parsed = parseSessionFile(path);
    if (!parsed.header) throw new SessyncError('corrupt', `${path} is not a session file: ${parsed.problems[0]?.reason ?? 'empty file'}`);
    if (parsed.version > CURRENT_VERSION) {
      throw new SessyncError('unsupported_version', `${path} is format version ${parsed.version}, newer than this sessync (${CURRENT_VERSION})`);
    }
    const m = await migrateSession(parsed);
    const base = { path, fromVersion: m.fromVersion, toVersion: m.toVersion, problems: parsed.problems };
    if (!m.changed) return { ...base, changed: false };
    const backup = await backupPath(path);
    // The backup is durable before the rename, and rename is atomic: at every instant either the original or the
    // migrated file is at `path`, and the original survives beside it.
    await copyFile(path, backup);
    await chmod(backup, PRIVATE_FILE); // a file sessync makes is private, whatever mode the original had
    await fsyncPath(backup);
    const tmp = await writeTemp(path, serializeSession(m.header, m.entries));
    try {
      await rename(tmp, path);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    await fsyncPath(dirname(path));
    await readTailState(path, env); // leaves name and message count for `list`
    return { ...base, changed: true, backup };
  });
}

/** Migrates the file first when its header says it is an old version (for commands about to write to it). */
export async function ensureCurrent(path: string, env: NodeJS.ProcessEnv = process.env): Promise<MigrateResult | null> {
  const h = await readHeader(path);
  if (!h.ok) throw new SessyncError('corrupt', `${basename(path)}: ${h.reason}`);
  const v = h.header.version ?? 1;
  return v < CURRENT_VERSION ? migrateFile(path, env) : null;
}
