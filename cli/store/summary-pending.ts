// List rows of the files a pull created, kept in memory and saved into their folders' list caches at once: one write per folder, not a cache file per session.
import { basename, dirname } from 'node:path';
import type { SessionHeader } from '../../shared/entry.js';
import { sessyncHome } from './paths.js';
import { loadSummaries, saveSummaries, type SummaryRow } from './summary-cache.js';
import type { TailState } from './tail-state.js';
import { noteLine } from './cache-save.js';
import { newestOfState } from './last-entry-time.js';

/** Rows waiting, by home and folder, each with the run's env (its SESSYNC_HOME holds the list cache). */
const pending = new Map<string, { dir: string; env: NodeJS.ProcessEnv; rows: Map<string, SummaryRow> }>();
let hooked = false;

/**
 * The row `list` would make of a file just written whole: what its state (stateOfWritten) and header say, with the
 * newest entry time list takes from a tail state that describes the file (null when the state cannot say: the header's
 * time stands in, as for a file without any timed entry).
 */
export function summaryRowOf(path: string, header: SessionHeader, state: TailState): SummaryRow {
  return [basename(path), state.size, state.mtimeMs, header.id, String(header.cwd), String(header.timestamp), state.name ?? null, state.messageCount, newestOfState(state) ?? null];
}

/**
 * Queues the list row of a file just created. A cache: saved by saveQueuedSummaries (a sync run calls it once its
 * pulls are done), else before the process exits; a crash first only means the next `list` reads the files' heads
 * and tails, and shows their name and message count once they are opened.
 */
export function queueSummaryRow(path: string, row: SummaryRow, env: NodeJS.ProcessEnv): void {
  const dir = dirname(path);
  const key = `${sessyncHome(env)}\0${dir}`;
  let p = pending.get(key);
  if (!p) pending.set(key, (p = { dir, env, rows: new Map() }));
  p.rows.set(row[0], row);
  if (!hooked) {
    hooked = true;
    process.on('beforeExit', () => {
      if (pending.size > 0) void saveQueuedSummaries().catch(reportLost);
    });
  }
}

/** Saves every queued row into its folder's list cache (one read and one write per folder). */
export async function saveQueuedSummaries(): Promise<void> {
  const folders = [...pending.values()];
  pending.clear();
  let failed: unknown = null;
  for (const p of folders) {
    try {
      await saveFolder(p);
    } catch (e) {
      failed ??= e;
    }
  }
  if (failed !== null) throw failed;
}

async function saveFolder(p: { dir: string; env: NodeJS.ProcessEnv; rows: Map<string, SummaryRow> }): Promise<void> {
  const cache = await loadSummaries(p.dir, p.env);
  // A row of the same file (an older file by that name) is replaced; the others stay as they are.
  const rows = cache.rows.filter((r) => !p.rows.has(r[0]));
  rows.push(...p.rows.values());
  await saveSummaries({ ...cache, rows }, p.env);
}

/** After the answer: a cache not saved is said on stderr (the next list reads the files instead), not as an exit code. */
function reportLost(e: unknown): void {
  process.stderr.write(noteLine(`could not save the list cache (${e instanceof Error ? e.message : String(e)}); the next list reads the files`));
}
