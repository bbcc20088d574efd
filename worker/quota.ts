// Optional per-account quota (bytes of stored batches, sessions), set by the admin; off unless a quota object exists.
import type { BlobStore } from './store/blob-store.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { keys, parseHeadKey, parseSeqPart } from '../shared/keys.js';
import { z } from 'zod';
import { QuotaSchema, type Quota, type QuotaResponse } from '../shared/wire.js';
import { addAtRequestEnd, sharedRead } from './store/group-commit.js';
import { batchBytes, encodeJson, listAll, readBatch } from './session-data.js';
import { readStoredRecord } from './stored-record.js';

/** Stored limits are read as the admin route checks them; keys a newer server added are dropped, not refused. */
const StoredQuotaSchema = QuotaSchema.strip();
const UsageSchema = z.object({ bytes: z.number().int().min(0) }).passthrough();
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
  return { bytes, sessions: heads.size };
}

/**
 * Bytes from the counter (counted when the quota was set, kept up by pushes and deletions), and whether it had to be
 * counted again (missing or damaged). A recount is saved unless `save` is false: a push's check must not write (see
 * readCounterOfRequest).
 */
async function readUsage(store: BlobStore, account: string, save = true): Promise<{ bytes: number; recounted: boolean }> {
  const key = keys.usage(account);
  // The counter is derived (recounted whenever the admin sets a quota): a damaged one is logged and counted again.
  const usage = await readStoredRecord(store, key, UsageSchema, 'usage counter', 'it is counted again').catch((e: unknown) => (isSessyncError(e, 'corrupt') ? null : Promise.reject(e)));
  if (usage) return { bytes: usage.bytes, recounted: false };
  const counted = await countUsage(store, account);
  if (save) await store.put(key, encodeJson({ bytes: counted.bytes }));
  return { bytes: counted.bytes, recounted: true };
}

async function readBytes(store: BlobStore, account: string, save = true): Promise<number> {
  return (await readUsage(store, account, save)).bytes;
}

/**
 * Adds `delta` (negative after a deletion) to the bytes counter of an account that has a quota. Runs once the batches
 * are stored (or deleted): a counter counted again now already holds them, and is saved as counted.
 */
export async function addBytes(store: BlobStore, account: string, delta: number): Promise<void> {
  const { bytes, recounted } = await readUsage(store, account, false);
  await store.put(keys.usage(account), encodeJson({ bytes: recounted ? bytes : Math.max(0, bytes + delta) }));
}

export async function quotaReport(store: BlobStore, account: string): Promise<QuotaResponse> {
  const quota = (await readQuota(store, account)) ?? {};
  if (quota.maxBytes === undefined && quota.maxSessions === undefined) return { account, quota, usage: await countUsage(store, account) };
  return { account, quota, usage: { bytes: await readBytes(store, account), sessions: (await sessionIds(store, account)).size } };
}

/** Sets the limits ({} clears them) and recounts the usage, so the counter starts from what is really stored. */
export async function setQuota(store: BlobStore, account: string, quota: Quota): Promise<QuotaResponse> {
  const usage = await countUsage(store, account);
  await store.put(keys.usage(account), encodeJson({ bytes: usage.bytes }));
  await store.put(keys.quota(account), encodeJson(quota));
  return { account, quota, usage };
}

function megabytes(n: number): string {
  return `${(n / 1e6).toFixed(n < 1e6 ? 3 : 1)} MB`;
}

/**
 * The counter for a request's checks. One counted again (missing or damaged) is saved however the request ends, also
 * when it stores no batch (all resent, or refused): else every later request would count the account again. Inside a
 * request's group it is saved when the request ends (a write here would stall the group, see readQuotaGate); outside
 * one (the single route) nothing waits on this read, so it is saved now, and a batch stored after adds to it.
 */
async function readCounterOfRequest(store: BlobStore, account: string): Promise<{ stored: number; admitted: number }> {
  const usage = await readUsage(store, account, false);
  if (usage.recounted) {
    const key = keys.usage(account);
    // The count above was made before the request's batches were stored: they are added to it, not counted again
    // (a second count in one request would pass the Workers budget of storage calls on its own).
    const save = (s: BlobStore, total: number) => s.put(key, encodeJson({ bytes: usage.bytes + total }));
    if (!addAtRequestEnd(store, key, 0, save)) await store.put(key, encodeJson({ bytes: usage.bytes }));
  }
  return { stored: usage.bytes, admitted: 0 };
}

/** How a batch its quota admitted ended: made visible (its head written) by its push, covered already (a retry), or refused after the check (or its write failed). */
export type BatchOutcome = 'created' | 'exists' | 'failed';

/**
 * Admits one batch that adds `bodyBytes` (0 for a batch a head already covers, so counted) or throws 413 naming the
 * limit; `stored`: the batch is on the disk already (its head lost), so it is not refused for room, and still counts
 * when its head is written. What it returns is told how the batch ended, once (later calls do nothing), and the bytes
 * to count when `created` (the stored record's size, when the push found it stored).
 */
export type QuotaGate = (bodyBytes: number, o?: { stored?: boolean }) => (outcome: BatchOutcome, counted?: number) => Promise<void>;

/**
 * The quota's reads for one push (the limits, the usage counter, the account's heads when the session may be new),
 * each made once for all the batches of a request, and the gate that admits the batch, or null when the account has
 * no quota. The caller admits the batch after every other check before its write (the seq gap, the host limit), so
 * only batches that will be written take room. The batches of one request add up against both limits: each is
 * admitted against the count before the request plus what the request's batches admitted before it took, and a
 * batch that stores nothing (a retry, one refused after its admission) gives its room back. A retry the caller could
 * not tell apart before its write (its head lost in a crash) so holds room until its write says `exists`: a batch
 * checked meanwhile may be refused, and passes in the next request. The counter is read-modify-write, so pushes
 * racing each other may overshoot the limit by the batches in flight.
 */
export async function readQuotaGate(store: BlobStore, account: string, o: { session: string; hostHasHead: boolean; sessionHosts: number | null }): Promise<QuotaGate | null> {
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
  return (bodyBytes, o = {}) => {
    if (sessions && quota.maxSessions !== undefined) {
      const used = sessions.listed.size + sessions.admitted;
      if (used + 1 > quota.maxSessions) {
        throw new SessyncError('too_large', `account quota exceeded (maxSessions): the account holds ${used} of its ${quota.maxSessions} sessions${sessions.admitted > 0 ? ', counting the new ones this request brings before this one' : ''}; delete one (\`sessync rm <session> --remote\`) or ask the server's admin for a larger quota`, {
          details: { quota: 'maxSessions', limit: quota.maxSessions, used },
        });
      }
    }
    if (bytes && quota.maxBytes !== undefined && bodyBytes > 0 && !o.stored) {
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
    let settled = false;
    return async (outcome, counted = bodyBytes) => {
      if (settled) return;
      settled = true;
      if (outcome !== 'created' && bytes) bytes.admitted -= bodyBytes;
      if (bodyBytes === 0) counted = 0; // covered by a head already: counted when that head was written
      // A retry of a new session's first batch writes its head now: the session is the account's from here on.
      if (outcome === 'failed' && sessions) sessions.admitted--;
      if (outcome !== 'created' || counted === 0) return;
      // The batches of one request add up first and update the counter once when the request ends: side by side,
      // each would read the same old count and the last write would drop the others' bytes.
      if (!addAtRequestEnd(store, keys.usage(account), counted, (s, total) => addBytes(s, account, total))) await addBytes(store, account, counted);
    };
  };
}
