// Group commit for one request: the writes of several independent tasks (one per batch) go to the store together, and account-wide reads are shared.
import type { BlobObject, BlobStore, BlobWrite, ListOptions, ListPage } from './blob-store.js';

interface Queued {
  write: BlobWrite;
  member: number;
  resolve: (created: boolean) => void;
  reject: (e: unknown) => void;
}

/** What the tasks of one withGroupCommit call (one request) share. */
interface RequestScope {
  /** Account-wide reads, by key (see sharedRead). */
  reads: Map<string, Promise<unknown>>;
  /** Work done once for the request after every task has settled, by key, with the amounts added up (see addAtRequestEnd). */
  atEnd: Map<string, { total: number; work: (store: BlobStore, total: number) => Promise<void> }>;
}

const scopes = new WeakMap<BlobStore, RequestScope>();

/**
 * `load()`, run once under `key` for all the tasks of one request when `store` is a view withGroupCommit gave out,
 * and every time otherwise. Only for account-wide reads a request takes as one snapshot anyway (the quota, the
 * account's session count): the N batches of a request then cost one read of it, as one batch does, not N. The
 * tasks run side by side, so without the memo each would read the same thing at about the same moment. Also for a
 * read that `before` makes for a task (a batch's heads listing), which the task then reuses instead of a second call.
 */
export function sharedRead<T>(store: BlobStore, key: string, load: () => Promise<T>): Promise<T> {
  const scope = scopes.get(store);
  if (!scope) return load();
  let got = scope.reads.get(key) as Promise<T> | undefined;
  if (!got) {
    got = load();
    scope.reads.set(key, got);
  }
  return got;
}

/**
 * Inside withGroupCommit: adds `amount` to the request's total under `key`, and has `work` (the first one given for
 * the key) run with that total on the store once every task has settled, before withGroupCommit resolves; returns
 * true. Outside one: returns false, and the caller does its work itself. For a read-modify-write of one account-wide
 * object (the usage counter), which the tasks of a request running side by side would otherwise each base on the
 * same old value, the last write dropping the others' amounts.
 */
export function addAtRequestEnd(store: BlobStore, key: string, amount: number, work: (store: BlobStore, total: number) => Promise<void>): boolean {
  const scope = scopes.get(store);
  if (!scope) return false;
  const end = scope.atEnd.get(key);
  if (end) end.total += amount;
  else scope.atEnd.set(key, { total: amount, work });
  return true;
}

/** Runs the tasks' end-of-request work; a failure fails the request, as it fails the single-batch route. */
async function finish(store: BlobStore, scope: RequestScope): Promise<void> {
  for (const { total, work } of scope.atEnd.values()) await work(store, total);
}

/**
 * Runs tasks at once, each with its own view of the store. A write waits until every task still running is
 * waiting on a write too; then all waiting writes go to the store in one `writeMany` (one fsync round on the file
 * system) and each task continues. So each task keeps its own order of writes (its batch and meta, given together
 * by the view's writeMany, before its head) while N tasks cost one fsync round per step instead of N. Reads and
 * deletes go straight through.
 * Tasks must not wait for each other (they are independent batches), or the group would never flush. `before`,
 * when given, runs first with a view that only reads, whose shared reads (sharedRead) the tasks then reuse; what it
 * throws is thrown before any task runs.
 */
export async function withGroupCommit<T>(store: BlobStore, tasks: readonly ((store: BlobStore) => Promise<T>)[], before?: (store: BlobStore) => Promise<void>): Promise<PromiseSettledResult<T>[]> {
  const writeMany = store.writeMany?.bind(store);
  const scope: RequestScope = { reads: new Map(), atEnd: new Map() };
  // Reads made before any task starts (a request's checks that must see the whole request), shared with the tasks.
  if (before) {
    const reads: BlobStore = { get: (key) => store.get(key), list: (opts) => store.list(opts), delete: () => Promise.reject(new Error('withGroupCommit: `before` only reads')), putIfAbsent: () => Promise.reject(new Error('withGroupCommit: `before` only reads')), put: () => Promise.reject(new Error('withGroupCommit: `before` only reads')) };
    scopes.set(reads, scope);
    await before(reads);
  }
  // Object stores make each put durable alone: nothing to group, the tasks simply run side by side (on one view,
  // which shares the request's reads).
  if (!writeMany || tasks.length < 2) {
    const shared: BlobStore = {
      get: (key) => store.get(key),
      list: (opts) => store.list(opts),
      delete: (key) => store.delete(key),
      putIfAbsent: (key, body) => store.putIfAbsent(key, body),
      put: (key, body) => store.put(key, body),
    };
    if (writeMany) shared.writeMany = writeMany;
    scopes.set(shared, scope);
    const settled = await Promise.allSettled(tasks.map((t) => t(shared)));
    await finish(store, scope);
    return settled;
  }

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

  /** Queues all of one task's `writes` before the group may flush, so they go in the same round. */
  const enqueue = (member: number, writes: readonly BlobWrite[]): Promise<boolean[]> => {
    const done = writes.map(
      (write) =>
        new Promise<boolean>((resolve, reject) => {
          queue.push({ write, member, resolve, reject });
          waiting.set(member, (waiting.get(member) ?? 0) + 1);
        }),
    );
    maybeFlush();
    return Promise.all(done);
  };

  const view = (member: number): BlobStore => {
    const v: BlobStore = {
      get: (key: string): Promise<BlobObject | null> => store.get(key),
      list: (opts?: ListOptions): Promise<ListPage> => store.list(opts),
      delete: (key: string): Promise<void> => store.delete(key),
      putIfAbsent: async (key: string, body: Uint8Array) => (await enqueue(member, [{ key, body }]))[0]!,
      put: async (key: string, body: Uint8Array) => {
        await enqueue(member, [{ key, body, replace: true }]);
      },
      // A task's writes that need no order between them (a batch and its meta): one round for all of them.
      writeMany: (writes: readonly BlobWrite[]) => enqueue(member, writes),
    };
    scopes.set(v, scope);
    return v;
  };

  const settled = await Promise.allSettled(
    tasks.map(async (task, i) => {
      try {
        return await task(view(i));
      } finally {
        running--;
        maybeFlush();
      }
    }),
  );
  await finish(store, scope);
  return settled;
}
