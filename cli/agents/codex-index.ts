// Codex's index ($CODEX_HOME/state_5.sqlite, table threads): after sessync writes a rollout, a row of the index that
// names another path for that session (a restored backup, a copied CODEX_HOME) is removed, so Codex finds the rollout
// in sessions/ and indexes it again. Nothing else of the index is changed, and never while a Codex process has it open.
import { copyFile, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sessyncHome } from '../store/paths.js';
import { mkdirPrivate } from '../store/private-fs.js';
import { fsyncPath } from '../store/session-writer.js';
import { codexHolders } from './codex-holders.js';
import { codexIndexPath } from './codex-paths.js';
import { applyWal } from './codex-wal.js';

interface SqlDb {
  exec(sql: string, params?: unknown[]): { columns: string[]; values: unknown[][] }[];
  run(sql: string, params?: unknown[]): void;
  export(): Uint8Array;
  close(): void;
}
type SqlJs = { Database: new (data?: Uint8Array) => SqlDb };

let sqlJs: Promise<SqlJs> | undefined;
function loadSqlJs(): Promise<SqlJs> {
  // sql.js is SQLite compiled to wasm: loaded only when an index needs a change.
  sqlJs ??= (createRequire(import.meta.url)('sql.js') as () => Promise<SqlJs>)();
  return sqlJs;
}

/** The new database beside the old, written and fsynced, with the old one's mode. */
async function writeTemp(db: string, bytes: Uint8Array): Promise<string> {
  const tmp = `${db}.sessync-${process.pid}.tmp`;
  const fh = await open(tmp, 'w', (await stat(db)).mode & 0o777);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return tmp;
}

async function readOrEmpty(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Uint8Array(0);
    throw e;
  }
}

/** The rows of the index whose rollout_path for one of `sessions` differs from the one given (stale rows). */
export async function staleIndexRows(env: NodeJS.ProcessEnv, rollouts: readonly { session: string; path: string }[]): Promise<{ id: string; path: string }[]> {
  const db = codexIndexPath(env);
  const main = await readOrEmpty(db);
  if (main.length === 0) return [];
  const SQL = await loadSqlJs();
  const d = new SQL.Database(legacyHeader(applyWal(main, await readOrEmpty(`${db}-wal`))));
  try {
    return rowsOff(d, rollouts);
  } finally {
    d.close();
  }
}

/** WAL mode is a file-header flag (bytes 18-19 = 2); an in-memory copy is read and written in rollback mode. */
function legacyHeader(bytes: Uint8Array, mode = 1): Uint8Array {
  if (bytes.length >= 20 && bytes[18]! >= 1 && bytes[18]! <= 2) {
    bytes[18] = mode;
    bytes[19] = mode;
  }
  return bytes;
}

function rowsOff(d: SqlDb, rollouts: readonly { session: string; path: string }[]): { id: string; path: string }[] {
  const tables = d.exec("SELECT name FROM sqlite_master WHERE type='table' AND name='threads'");
  if (tables.length === 0) return [];
  const out: { id: string; path: string }[] = [];
  for (const r of rollouts) {
    const res = d.exec('SELECT rollout_path FROM threads WHERE id = ?', [r.session]);
    for (const row of res[0]?.values ?? []) if (row[0] !== r.path) out.push({ id: r.session, path: String(row[0]) });
  }
  return out;
}

/**
 * Removes the stale rows for these rollouts. The index's files are copied to sessync's folder first and stay there (the
 * last copy); the new database replaces the old in one rename, after its WAL (now part of it) is removed.
 */
export async function fixCodexIndex(env: NodeJS.ProcessEnv, rollouts: readonly { session: string; path: string }[], note: (t: string) => void): Promise<number> {
  const db = codexIndexPath(env);
  if (rollouts.length === 0 || !(await stat(db).then(() => true, () => false))) return 0;
  const holders = await codexHolders([db]);
  if (holders.length > 0) {
    note(`Codex (pid ${holders.join(', ')}) has its index ${db} open; if \`codex exec resume\` cannot find a pulled session, run sessync sync again once Codex exits`);
    return 0;
  }
  const main = await readOrEmpty(db);
  const wal = await readOrEmpty(`${db}-wal`);
  const SQL = await loadSqlJs();
  const d = new SQL.Database(legacyHeader(applyWal(main, wal)));
  try {
    const stale = rowsOff(d, rollouts);
    if (stale.length === 0) return 0;
    for (const s of stale) d.run('DELETE FROM threads WHERE id = ? AND rollout_path = ?', [s.id, s.path]);
    const bytes = legacyHeader(d.export(), main[18] === 2 ? 2 : 1);
    const keep = join(sessyncHome(env), 'agents', 'codex', 'index-backup');
    await mkdirPrivate(keep);
    for (const suffix of ['', '-wal']) if ((suffix === '' ? main : wal).length > 0) await copyFile(`${db}${suffix}`, join(keep, `state_5.sqlite${suffix}`));
    const tmp = await writeTemp(db, bytes);
    for (const suffix of ['-shm', '-wal']) await unlink(`${db}${suffix}`).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
    await rename(tmp, db);
    await fsyncPath(dirname(db));
    for (const s of stale) note(`Codex index: removed its row for session ${s.id}, which named ${s.path}; Codex indexes the session again from sessions/ when it resumes it`);
    return stale.length;
  } finally {
    d.close();
  }
}
