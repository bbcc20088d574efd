// Optional per-account quota (bytes of stored batches, sessions), set by the admin; off unless a quota object exists.
import type { BlobStore } from './store/blob-store.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { keys, parseHeadKey, parseSeqPart } from '../shared/keys.js';
import { z } from 'zod';
import { QuotaSchema, type Quota, type QuotaResponse } from '../shared/wire.js';
import { addAtRequestEnd, sharedRead } from './store/group-commit.js';
import { batchBytes, encodeJson, listAll, readBatch } from './session-data.js';
import { readStoredRecord } from './stored-record.js';
import { applyChange, batchName, encodeCounter, noChange, PendingSchema, settlePending, type Counter, type CounterChange, type Pending, type RequestMark } from './quota-pending.js';

/** Stored limits are read as the admin route checks them; keys a newer server added are dropped, not refused. */
const StoredQuotaSchema = QuotaSchema.strip();
const UsageSchema = z.object({ bytes: z.number().int().min(0), pending: z.array(PendingSchema).optional() }).passthrough();
const DAMAGED_QUOTA = "pushes to this account are refused until the server's admin sets its quota again (PUT /v1/admin/accounts/:account/quota), which replaces the record";

export interface Usage {
  bytes: number;
  sessions: number;
}

/** The account's quota, or null for none; read once per request however many batches the request holds. */
export async function readQuota(store: BlobStore, account: string): Promise<Quota | null> {
  const key = keys.quota(account);
  // A damaged record refuses the push (corrupt): guessing "no quota" would let the account past a limit set for it.
  const q = await sharedRead(store, `get ${key}`, () => readStoredRecord(store, key, StoredQuotaSchema, 'quota record of this account', DAMAGED_QUOTA));
  if (!q) return null;
  return q.maxBytes === undefined && q.maxSessions === undefined ? null : q;
}

/** The account's sessions, from the heads (list calls only, one per thousand heads), and the list calls it took. */
async function listSessions(store: BlobStore, account: string): Promise<{ sessions: Set<string>; pages: number }> {
  const sessions = new Set<string>();
  const prefix = keys.headsPrefix(account);
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list(cursor === undefined ? { prefix } : { prefix, cursor });
    pages++;
    for (const k of page.keys) {
      const h = parseHeadKey(account, k);
      if (h) sessions.add(h.session);
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return { sessions, pages };
}

async function sessionIds(store: BlobStore, account: string): Promise<Set<string>> {
  return (await listSessions(store, account)).sessions;
}

/** The account's heads listing of a request, read once for all its batches (sharedRead). */
function requestSessions(store: BlobStore, account: string): Promise<{ listed: Set<string>; pages: number; admitted: number }> {
  return sharedRead(store, `sessions ${account}`, async () => {
    const { sessions, pages } = await listSessions(store, account);
    return { listed: sessions, pages, admitted: 0 };
  });
}

/**
 * List calls the session quota's listing of the account's heads takes in this request (0 without a session quota):
 * read once, and shared with the request's batches, so a caller can fit its batches around them before any is stored.
 * Only for a request with a batch that may be of a new session: the batches of existing ones never need it.
 */
export async function sessionListingPages(store: BlobStore, account: string): Promise<number> {
  const quota = await readQuota(store, account);
  if (quota?.maxSessions === undefined) return 0;
  return (await requestSessions(store, account)).pages;
}

/**
 * Counts what the account stores now by reading every batch a head covers (seq at most its host's head): run when
 * the admin sets a quota, never per push. A batch no head covers yet (its push cut short before the head write) is
 * left out, as pushes count a batch when its head is written: the retry that writes it counts it.
 */
export async function countUsage(store: BlobStore, account: string): Promise<Usage> {
  return (await countWithHeads(store, account)).usage;
}

/** Whether batch `seq` of `host` in `session` is covered by the heads as listed (its host's head at or past it). */
function coveredBy(heads: Map<string, Map<string, number>>, p: Pick<Pending, 'session' | 'host' | 'seq'>): boolean {
  return (heads.get(p.session)?.get(p.host) ?? 0) >= p.seq;
}

async function countWithHeads(store: BlobStore, account: string): Promise<{ usage: Usage; heads: Map<string, Map<string, number>> }> {
  const heads = new Map<string, Map<string, number>>();
  for (const k of await listAll(store, keys.headsPrefix(account))) {
    const h = parseHeadKey(account, k);
    if (!h) continue;
    const hosts = heads.get(h.session) ?? new Map<string, number>();
    hosts.set(h.host, Math.max(h.seq, hosts.get(h.host) ?? 0));
    heads.set(h.session, hosts);
  }
  let bytes = 0;
  for (const [session, hosts] of heads) {
    const covered = (k: string) => {
      for (const [host, top] of hosts) {
        const prefix = keys.batchPrefix(account, session, host);
        if (!k.startsWith(prefix)) continue;
        const seq = parseSeqPart(k.slice(prefix.length));
        return seq !== null && seq <= top;
      }
      return false;
    };
    const batchKeys = (await listAll(store, keys.sessionPrefix(account, session) + 'b/')).filter(covered);
    for (let i = 0; i < batchKeys.length; i += 8) {
      const got = await Promise.all(batchKeys.slice(i, i + 8).map((k) => readBatch(store, k)));
      for (const b of got) bytes += batchBytes(b);
    }
  }
  return { usage: { bytes, sessions: heads.size }, heads };
}

/**
 * Bytes from the counter (counted when the quota was set, kept up by pushes and deletions), and whether it had to be
 * counted again (missing or damaged). A recount is saved unless `save` is false: a push's check must not write (see
 * readCounterOfRequest).
 */
async function readUsage(store: BlobStore, account: string, save = true): Promise<Counter & { recounted: boolean }> {
  const key = keys.usage(account);
  // The counter is derived (recounted whenever the admin sets a quota): a damaged one is logged and counted again.
  const usage = await readStoredRecord(store, key, UsageSchema, 'usage counter', 'it is counted again').catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e)));
  if (usage) return { bytes: usage.bytes, pending: usage.pending ?? [], recounted: false };
  // A recount counts every batch a head covers, so it names nothing pending (a batch whose push is still running
  // past this is left out, as in setQuota: a rare loss, only when the counter was lost).
  const counted = await countUsage(store, account);
  if (save) await store.put(key, encodeJson({ bytes: counted.bytes }));
  return { bytes: counted.bytes, pending: [], recounted: true };
}

async function readBytes(store: BlobStore, account: string, save = true): Promise<number> {
  return (await readUsage(store, account, save)).bytes;
}

/**
 * Adds `delta` (negative after a deletion) to the bytes counter of an account that has a quota. Runs once the batches
 * are stored (or deleted): a counter counted again now already holds them, and is saved as counted.
 */
export async function addBytes(store: BlobStore, account: string, delta: number, change: (pending: readonly Pending[]) => CounterChange = noChange): Promise<void> {
  const c = await readUsage(store, account, false);
  const next = applyChange(c.recounted ? c : { bytes: c.bytes + delta, pending: c.pending }, change(c.pending));
  await store.put(keys.usage(account), encodeCounter(next));
}

/**
 * For a deletion of `session` whose heads were `heads` (null: unknown, every batch taken off): its batches the
 * counter names as pending are settled, those the heads covered counted (the deletion takes their bytes off), the
 * others dropped (never added, and not taken off).
 */
export function settleDeletedSession(session: string, heads: Map<string, number> | null): (pending: readonly Pending[]) => CounterChange {
  return (pending) => {
    const change = noChange();
    for (const p of pending) {
      if (p.session !== session) continue;
      if (heads === null || p.seq <= (heads.get(p.host) ?? 0)) change.visible.set(batchName(p), p.bytes);
      else change.drop.push(p);
    }
    return change;
  };
}

export async function quotaReport(store: BlobStore, account: string): Promise<QuotaResponse> {
  const quota = (await readQuota(store, account)) ?? {};
  if (quota.maxBytes === undefined && quota.maxSessions === undefined) return { account, quota, usage: await countUsage(store, account) };
  return { account, quota, usage: { bytes: await readBytes(store, account), sessions: (await sessionIds(store, account)).size } };
}

/** Sets the limits ({} clears them) and recounts the usage, so the counter starts from what is really stored. */
export async function setQuota(store: BlobStore, account: string, quota: Quota): Promise<QuotaResponse> {
  // A counter missing or damaged names nothing to keep (read without a recount: the count below is the one).
  const before = await readStoredRecord(store, keys.usage(account), UsageSchema, 'usage counter', 'it is counted again').catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e)));
  const { usage, heads } = await countWithHeads(store, account);
  // Pending batches the count covers are in it; the others (their push still running) stay named, for it to count.
  const pending = (before?.pending ?? []).filter((p) => !coveredBy(heads, p));
  await store.put(keys.usage(account), encodeCounter({ bytes: usage.bytes, pending }));
  await store.put(keys.quota(account), encodeJson(quota));
  return { account, quota, usage };
}

function megabytes(n: number): string {
  return `${(n / 1e6).toFixed(n < 1e6 ? 3 : 1)} MB`;
}

/** What one request knows of the usage counter: read once, shared by its batches, written by its marker and at its end. */
interface RequestCounter {
  /** Bytes and pending batches as read (or counted again) at the request's start. */
  stored: number;
  pending: Pending[];
  /** Room the request's batches took so far (see readQuotaGate). */
  admitted: number;
  /** Counted again and not saved yet (inside a group: saved by the marker, or at the request's end). */
  unsaved: boolean;
  /** Names the request's batches in the counter. */
  request: string;
  /** What the request found of earlier requests' pending batches, and what its own batches did. */
  change: CounterChange;
  /** Whether the end-of-request write is done by the group (else each batch's settlement writes). */
  atEnd: boolean;
}

const isEmpty = (c: CounterChange) => c.visible.size === 0 && c.drop.length === 0 && c.add.length === 0;

/**
 * The request's end write: the counter read again (others may have written it since) with this request's change
 * applied. Nothing is written when the request changed nothing.
 */
async function finishRequest(store: BlobStore, account: string, st: RequestCounter): Promise<void> {
  if (!st.unsaved && isEmpty(st.change)) return;
  const base = st.unsaved ? { bytes: st.stored, pending: st.pending, recounted: true } : await readUsage(store, account, false);
  await store.put(keys.usage(account), encodeCounter(applyChange(base, st.change)));
  st.unsaved = false;
}

/**
 * The counter for a request's checks, with the settlement of the oldest pending batches of earlier requests (see
 * settlePending; done before any batch of this request writes, so its own heads never pass for theirs). One counted
 * again (missing or damaged) is saved however the request ends, also when it stores no batch (all resent, or
 * refused): else every later request would count the account again. Inside a request's group it is saved by the
 * marker or when the request ends (a write here would stall the group, see readQuotaGate); outside one (the single
 * route) nothing waits on this read, so it is saved now.
 */
async function readCounterOfRequest(store: BlobStore, account: string): Promise<RequestCounter> {
  const usage = await readUsage(store, account, false);
  const st: RequestCounter = { stored: usage.bytes, pending: usage.pending, admitted: 0, unsaved: usage.recounted, request: crypto.randomUUID(), change: noChange(), atEnd: false };
  if (usage.pending.length) st.change = await settlePending(store, account, usage.pending);
  // The count above was made before the request's batches were stored: they are added to it, not counted again
  // (a second count in one request would pass the Workers budget of storage calls on its own).
  st.atEnd = addAtRequestEnd(store, keys.usage(account), 0, (s) => finishRequest(s, account, st));
  if (!st.atEnd && usage.recounted) {
    await store.put(keys.usage(account), encodeCounter(usage));
    st.unsaved = false;
  }
  return st;
}

/**
 * Where a push's head write left the batch: `made` (this write created the head), `found` (the head write found it
 * there: a resent write whose first try landed), `unknown` (the head write failed: it may have landed), `none` (no
 * head write: refused, failed before it, or a head covered the batch already).
 */
export type HeadState = 'made' | 'found' | 'unknown' | 'none';

/** A batch its quota admitted: the marker's wait before its first write, and its settlement once its push ends. */
export interface Admitted {
  /** Before the batch's first write: names it in the counter (with the request's other batches, one write). */
  beforeWrites(): Promise<void>;
  /** Told once how the push ended (later calls do nothing), with the bytes to count (the stored record's size). */
  settle(head: HeadState, counted?: number): Promise<void>;
}

/**
 * Admits one batch that adds `bodyBytes` (0 for a batch a head already covers, so counted) or throws 413 naming the
 * limit; `stored`: the batch is on the disk already (its head lost), so it is not refused for room, and still counts
 * when its head is written.
 */
export type QuotaGate = (bodyBytes: number, o?: { stored?: boolean }) => Admitted;

/**
 * The quota's reads for one push (the limits, the usage counter, the account's heads when the session may be new),
 * each made once for all the batches of a request, and the gate that admits the batch, or null when the account has
 * no quota. The caller admits the batch after every other check before its write (the seq gap, the host limit), so
 * only batches that will be written take room. The batches of one request add up against both limits: each is
 * admitted against the count before the request plus what the request's batches admitted before it took, and a
 * batch that makes no head (a retry a head covers, one refused after its admission) gives its room back. A retry the
 * caller could not tell apart before its write (its head lost in a crash) so holds room until its push ends: a batch
 * checked meanwhile may be refused, and passes in the next request. The counter is read-modify-write, so pushes
 * racing each other may overshoot the limit by the batches in flight.
 *
 * Counting is exactly once under lost replies and kills: before a request's first write, the counter names the
 * batches it is about to make visible (one write, with maxBytes only, see RequestMark); a batch is counted by
 * whoever takes its name out of the counter, and only once its head exists: the request itself at its end, when its
 * head write made or found the head, or a later request that finds the head there (settlePending).
 */
export async function readQuotaGate(store: BlobStore, account: string, o: { session: string; host: string; seq: number; hostHasHead: boolean; sessionHosts: number | null; mark: RequestMark }): Promise<QuotaGate | null> {
  const quota = await readQuota(store, account);
  if (!quota) return null;
  // One listing of the account's heads per request, however many new sessions it brings.
  const listed = () => requestSessions(store, account);
  // A session this host has a head in is not new; else the caller's listing of the session's heads says (seq 1), or
  // the account's listing does: a session of no heads there is new, at no listing per batch.
  const newSession = async () => !o.hostHasHead && (o.sessionHosts !== null ? o.sessionHosts === 0 : !(await listed()).listed.has(o.session));
  // Sessions are counted from the heads, and only for the first batch of a new session: exact, and no counter to drift.
  const sessions = quota.maxSessions !== undefined && (await newSession()) ? await listed() : null;
  // One read of the counter for all the batches of a request. Inside a request's group it never writes (a recount is
  // saved at the request's end): inside a group commit a write waits for every batch to be waiting on a write, and
  // the batches waiting on this shared read never would.
  const bytes = quota.maxBytes !== undefined ? await sharedRead(store, `bytes ${account}`, () => readCounterOfRequest(store, account)) : null;
  return (bodyBytes, opts = {}) => {
    if (sessions && quota.maxSessions !== undefined) {
      const used = sessions.listed.size + sessions.admitted;
      if (used + 1 > quota.maxSessions) {
        throw new SessyncError('too_large', `account quota exceeded (maxSessions): the account holds ${used} of its ${quota.maxSessions} sessions${sessions.admitted > 0 ? ', counting the new ones this request brings before this one' : ''}; delete one (\`sessync rm <session> --remote\`) or ask the server's admin for a larger quota`, {
          details: { quota: 'maxSessions', limit: quota.maxSessions, used },
        });
      }
    }
    if (bytes && quota.maxBytes !== undefined && bodyBytes > 0 && !opts.stored) {
      const used = bytes.stored + bytes.admitted;
      if (used + bodyBytes > quota.maxBytes) {
        throw new SessyncError('too_large', `account quota exceeded (maxBytes): this batch of ${megabytes(bodyBytes)} would bring the account to ${megabytes(used + bodyBytes)} of its ${megabytes(quota.maxBytes)}${bytes.admitted > 0 ? ", counting this request's batches before it" : ''}; delete sessions (\`sessync rm <session> --remote\`) or ask the server's admin for a larger quota`, {
          details: { quota: 'maxBytes', limit: quota.maxBytes, used },
        });
      }
    }
    // Room is taken only once both limits let the batch through: a batch refused by one holds none of the other.
    if (sessions) sessions.admitted++;
    if (bytes) bytes.admitted += bodyBytes;
    // A batch a head covers is counted already: it names nothing, and any batch of its host up to it that an
    // earlier request left named is visible too (its head exists): settled here, at no store call.
    if (bytes && bodyBytes === 0) {
      for (const p of bytes.pending) if (p.session === o.session && p.host === o.host && p.seq <= o.seq) bytes.change.visible.set(batchName(p), p.bytes);
    }
    const entry: Pending | null = bytes && bodyBytes > 0 ? { session: o.session, host: o.host, seq: o.seq, bytes: bodyBytes, request: bytes.request, at: Date.now() } : null;
    let settled = false;
    return {
      beforeWrites: () => {
        if (!bytes) {
          o.mark.leave(); // no counter to name it in
          return Promise.resolve();
        }
        return o.mark.arrive(entry, async (raw, entries) => {
          await raw.put(keys.usage(account), encodeCounter(applyChange({ bytes: bytes.stored, pending: bytes.pending }, { ...bytes.change, add: entries })));
          bytes.unsaved = false;
        });
      },
      settle: async (head, counted = bodyBytes) => {
        if (settled) return;
        settled = true;
        if (head === 'none') {
          if (bytes) bytes.admitted -= bodyBytes;
          if (sessions) sessions.admitted--;
        }
        if (!bytes) return;
        // Made or found, the head exists: counted by whoever takes the name out. Unknown: left named, for a later request.
        if (entry && (head === 'made' || head === 'found')) bytes.change.visible.set(batchName(entry), counted);
        else if (entry && head === 'none') bytes.change.drop.push(entry);
        // Inside a group the request's end writes the counter once for all its batches: side by side, each would read
        // the same old count and the last write would drop the others' bytes.
        if (!bytes.atEnd) await finishRequest(store, account, bytes);
      },
    };
  };
}
