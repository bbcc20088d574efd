// Progress bar for long syncs (sessions, entries, bytes) on stderr, only for a human at a terminal.
import cliProgress from 'cli-progress';
import type { SyncProgress } from './sync-context.js';

export interface Progress {
  start(totalSessions: number): void;
  /** Entries and bytes moved within the current session. */
  moved(p: SyncProgress): void;
  sessionDone(): void;
  stop(): void;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

const SILENT: Progress = { start() {}, moved() {}, sessionDone() {}, stop() {} };

/** A bar when stderr is a TTY and output is not --json; otherwise it does nothing (one summary line is printed anyway). */
export function createProgress(opts: { json: boolean; stream?: NodeJS.WriteStream; minSessions?: number }): Progress {
  const stream = opts.stream ?? process.stderr;
  if (opts.json || !stream.isTTY) return SILENT;
  let bar: cliProgress.SingleBar | null = null;
  let entries = 0;
  let bytes = 0;
  let done = 0;
  return {
    start(total) {
      if (total < (opts.minSessions ?? 2)) return;
      bar = new cliProgress.SingleBar(
        { format: 'sync [{bar}] {value}/{total} sessions | {entries} entries | {size}', stream, hideCursor: true, clearOnComplete: true, etaBuffer: 20 },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { entries: 0, size: formatBytes(0) });
    },
    moved(p) {
      entries += p.entries ?? 0;
      bytes += p.bytes ?? 0;
      bar?.update(done, { entries, size: formatBytes(bytes) });
    },
    sessionDone() {
      done++;
      bar?.update(done, { entries, size: formatBytes(bytes) });
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}
