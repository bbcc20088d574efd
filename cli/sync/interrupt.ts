// Ctrl-C (SIGINT) or SIGTERM during a push / pull / sync / restore / sync --watch: the run stops before its next request, saves its state, and exits 130 / 143.
import { SessyncError, isSessyncError } from '../../shared/errors.js';

/** The exit code of a process a signal ended, as a shell gives it: 128 + the signal's number. */
const EXIT: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };

/** A signal received while a run is under way: asked before each request (the client's beforeRequest). */
export interface Interrupt {
  /** The first signal received, or null. */
  readonly signal: NodeJS.Signals | null;
  /** Aborted at the first signal: what a waiting loop (sync --watch between rounds) wakes up on. */
  readonly stopped: AbortSignal;
  /** Throws `interrupted` once a signal came. */
  check(): void;
  /** Takes the handlers back (the default, leaving at once, holds again). */
  dispose(): void;
}

/**
 * Handles SIGINT and SIGTERM for the length of a run. The first one only asks the run to stop: every durable step
 * in flight ends (a batch's state, a page's entries and cursor), the journal is compacted by the run's own finally
 * blocks, and the error reaches the command. A second one leaves at once: every state write is safe at any point
 * (a kill -9 there only re-sends or re-pulls, never loses or doubles), so that costs nothing but time next run.
 */
export function watchSignals(): Interrupt {
  let signal: NodeJS.Signals | null = null;
  const stopped = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    if (signal !== null) {
      // Said, so a user is not left with an empty screen: the state is what a kill leaves, which the next run takes up.
      process.stderr.write(`sessync: ${sig} again: stopped at once, before the run's state was compacted; nothing is lost, and the same command again finishes it\n`);
      process.exit(EXIT[sig] ?? 1);
    }
    signal = sig;
    stopped.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    get signal() {
      return signal;
    },
    stopped: stopped.signal,
    check() {
      if (signal !== null) throw interruptedError(signal);
    },
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

export function interruptedError(signal: NodeJS.Signals): SessyncError {
  return new SessyncError(
    'interrupted',
    `interrupted (${signal}): stopped before the next request with everything done so far saved; nothing was lost. Run the same command again to finish (nothing is sent or pulled twice)`,
    { retryable: true, details: { signal } },
  );
}

/** The exit code for an `interrupted` error (130 for SIGINT, 143 for SIGTERM); undefined for any other error. */
export function interruptedExit(e: unknown): number | undefined {
  if (!isSessyncError(e, 'interrupted')) return undefined;
  const sig = (e.details as { signal?: NodeJS.Signals } | undefined)?.signal;
  return (sig && EXIT[sig]) ?? 130;
}
