// A pull of one session keeps its page states in the run's journal, as a many-session pull does: one fsync per pull request, not a state file per page.
import type { SyncContext } from './sync-context.js';

/**
 * Runs `fn` (one session's pull, and the leaf marker's push it may make) with the state journal open. Each page's
 * state is saved after its entries are fsynced in the file, then made durable by one journal append and fsync
 * just before the next pull request (or a push of the marker's batch) leaves, and written to its own file when the
 * journal is compacted at the end. A kill -9 in between loses at most the cursors of pages already in the file:
 * the next run recovers the journal and pulls those pages again, and the merge by id appends none of them twice.
 */
export async function withPullJournal<T>(ctx: SyncContext, fn: () => Promise<T>): Promise<T> {
  // Inside a many-session phase the batcher's requests already flush the journal: nothing to add.
  if (ctx.pull || ctx.pushBatch) return fn();
  ctx.state.openJournal();
  ctx.pull = async (session, cursor, o) => {
    await ctx.state.flushJournal();
    return ctx.api.pullPage(session, cursor, o);
  };
  ctx.pushBatch = async (req) => {
    await ctx.state.flushJournal(); // the marker's pending batch is durable before it can arrive
    return ctx.api.pushBatch(req);
  };
  try {
    return await fn();
  } finally {
    delete ctx.pull;
    delete ctx.pushBatch;
    await ctx.state.closeJournal();
  }
}
