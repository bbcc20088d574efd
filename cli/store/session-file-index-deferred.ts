// Index files written after the command's answer: queued by a first open, written before the process exits (a cache, so a crash first only means the next open indexes again).

/** The latest pending write of each index file (a later rebuild of the same file replaces an earlier one). */
const pending = new Map<string, () => Promise<void>>();
let hooked = false;
let flushing: Promise<void> | null = null;

/**
 * Runs `write` for index file `file` once this process has nothing else to do (Node's beforeExit: the answer has been
 * printed), or at the next flushIndexWrites. Not on process.exit or a signal: the index is only a cache of the file.
 */
export function deferIndexWrite(file: string, write: () => Promise<void>): void {
  pending.delete(file); // re-queued at the end: writes happen in the order they were asked for
  pending.set(file, write);
  if (!hooked) {
    hooked = true;
    process.on('beforeExit', () => {
      // Writing makes the event loop busy again, so beforeExit comes back once they are done; then nothing is left.
      if (pending.size > 0) void flushIndexWrites().catch(reportLost);
    });
  }
}

/** Drops the queued write of `file`: a newer index of the same session is being written now. */
export function dropIndexWrite(file: string): void {
  pending.delete(file);
}

/** Writes every queued index now (in order); the first failure is thrown after the others were tried. */
export async function flushIndexWrites(): Promise<void> {
  while (flushing) await flushing;
  if (pending.size === 0) return;
  const jobs = [...pending.values()];
  pending.clear();
  flushing = (async () => {
    let failed: unknown = null;
    for (const job of jobs) {
      try {
        await job();
      } catch (e) {
        failed ??= e;
      }
    }
    if (failed !== null) throw failed;
  })();
  try {
    await flushing;
  } finally {
    flushing = null;
  }
}

/** The answer is out already: a failed cache write is said on stderr (the next open indexes again), not as an exit code. */
function reportLost(e: unknown): void {
  process.stderr.write(`sessync: could not save the session index (${e instanceof Error ? e.message : String(e)}); the next open rebuilds it\n`);
}
