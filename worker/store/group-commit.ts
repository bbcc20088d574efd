// Group commit for one request: the writes of several independent tasks (one per batch) go to the store together.
import type { BlobObject, BlobStore, BlobWrite, ListOptions, ListPage } from './blob-store.js';

interface Queued {
  write: BlobWrite;
  member: number;
  resolve: (created: boolean) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs tasks at once, each with its own view of the store. A write waits until every task still running is
 * waiting on a write too; then all waiting writes go to the store in one `writeMany` (one fsync round on the file
 * system) and each task continues. So each task keeps its own order of writes (a batch before its meta, the meta
 * before the head) while N tasks cost one fsync round per step instead of N. Reads and deletes go straight through.
 * Tasks must not wait for each other (they are independent batches), or the group would never flush.
 */
export async function withGroupCommit<T>(store: BlobStore, tasks: readonly ((store: BlobStore) => Promise<T>)[]): Promise<PromiseSettledResult<T>[]> {
  const writeMany = store.writeMany?.bind(store);
  // Object stores make each put durable alone: nothing to group, the tasks simply run side by side.
  if (!writeMany || tasks.length < 2) return Promise.allSettled(tasks.map((t) => t(store)));

  let running = tasks.length;
  /** Queued writes per task: a task with any is waiting on the group. */
  const waiting = new Map<number, number>();
  let queue: Queued[] = [];
  let flushing = false;

  const maybeFlush = (): void => {
    if (flushing || queue.length === 0 || waiting.size < running) return;
    const group = queue;
    queue = [];
    flushing = true;
    writeMany(group.map((q) => q.write)).then(
      (created) => group.forEach((q, i) => q.resolve(created[i]!)),
      // Any subset may be stored, each whole: every task of the group fails, and its retry finds what landed.
      (e) => group.forEach((q) => q.reject(e)),
    ).finally(() => {
      for (const q of group) {
        const n = waiting.get(q.member)! - 1;
        if (n === 0) waiting.delete(q.member);
        else waiting.set(q.member, n);
      }
      flushing = false;
      maybeFlush();
    });
  };

  const enqueue = (member: number, write: BlobWrite): Promise<boolean> =>
    new Promise<boolean>((resolve, reject) => {
      queue.push({ write, member, resolve, reject });
      waiting.set(member, (waiting.get(member) ?? 0) + 1);
      maybeFlush();
    });

  const view = (member: number): BlobStore => ({
    get: (key: string): Promise<BlobObject | null> => store.get(key),
    list: (opts?: ListOptions): Promise<ListPage> => store.list(opts),
    delete: (key: string): Promise<void> => store.delete(key),
    putIfAbsent: (key: string, body: Uint8Array) => enqueue(member, { key, body }),
    put: async (key: string, body: Uint8Array) => {
      await enqueue(member, { key, body, replace: true });
    },
  });

  return Promise.allSettled(
    tasks.map(async (task, i) => {
      try {
        return await task(view(i));
      } finally {
        running--;
        maybeFlush();
      }
    }),
  );
}
