// Stores one validated push (batch, meta, head) for an account: the per-batch logic behind POST /v1/sessions/:session/batches.
import { joinBody, type BlobBody, type BlobObject, type BlobStore, type BlobWrite } from './store/blob-store.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { keys, parseHeadKey } from '../shared/keys.js';
import { isSealedMetaInput, LIMITS, type AnySessionMetaInput, type BatchEnvelope, type PushBatchResponse } from '../shared/wire.js';
import type { StoredAccountKey } from './account-key.js';
import { validateBatch, validateMeta, type BatchPush } from './batch-validate.js';
import { checkPushEncryption, refuseOtherDataKey } from './encryption-policy.js';
import { guardPush } from './push-guard.js';
import { sharedRead } from './store/group-commit.js';
import type { QuotaGate } from './quota.js';
import { batchBytes, batchRecordParts, encodeJson, isDamaged, listAll, rawSealedBytes, readBatch, type StoredBatchRecord, type StoredMeta } from './session-data.js';
import { sha256Hex } from './sha256.js';

const decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);

/**
 * Whether the push is the stored batch again (a retry). Same form: the same envelope facts, sha256 included. A sealed
 * body stored in one form and pushed in the other (a batch sent as base64 JSON, resent as a raw frame after an
 * upgrade, or the reverse) is the same batch when its raw bytes are: the base64 side is decoded and hashed (rare).
 */
async function sameBatch(stored: StoredBatchRecord, push: BatchPush): Promise<boolean> {
  const a = stored.envelope;
  const b = push.envelope;
  if (a.batchId !== b.batchId || a.entryCount !== b.entryCount || a.encoding !== b.encoding) return false;
  if (a.encoding !== 'aes-256-gcm' || stored.base64 === push.base64) return a.sha256 === b.sha256;
  let raw: Uint8Array;
  try {
    raw = rawSealedBytes(push.base64 ? { ...push, body: joinBody(push.body) } : stored); // a base64 push is JSON: one buffer
  } catch {
    return false; // a base64 side that does not decode is not the batch of the other side
  }
  return (await sha256Hex(raw)) === (push.base64 ? a.sha256 : b.sha256);
}

interface HeadKey {
  key: string;
  seq: number;
}

/**
 * What a push needs to know of the session's heads, from one listing: this host's head keys (normally one; more
 * only while a push is between its head write and its cleanup) and, for seq 1, how many hosts the session has.
 * Seq 1 lists the whole session (it answers the host limit and the quota's new-session question as well); a later
 * seq lists only this host's heads, as that is all it needs unless they turn out lagging.
 */
function listHeads(store: BlobStore, account: string, env: BatchEnvelope): Promise<{ host: HeadKey[]; hosts: number | null }> {
  const wide = env.seq === 1;
  const prefix = wide ? keys.sessionHeadsPrefix(account, env.session) : keys.hostHeadsPrefix(account, env.session, env.host);
  // Shared within a request: the route's check of its batches before they run (mayBeNewSession) reads the same.
  // Keyed by the prefix alone although `host` is this env's: a request holds one batch per session (routes/multi-batches.ts).
  return sharedRead(store, `heads ${prefix}`, () => headsUnder(store, account, env, prefix, wide));
}

/**
 * Whether the push may bring a new session to the account, from its heads listing (no other call): not when its host
 * has a head in the session, nor on seq 1 when another host has; else (a host whose heads were lost, or a session of
 * no heads) only the account's heads can tell.
 */
export async function mayBeNewSession(store: BlobStore, account: string, env: BatchEnvelope): Promise<boolean> {
  const listed = await listHeads(store, account, env);
  return listed.host.length === 0 && (listed.hosts === null || listed.hosts === 0);
}

async function headsUnder(store: BlobStore, account: string, env: BatchEnvelope, prefix: string, wide: boolean): Promise<{ host: HeadKey[]; hosts: number | null }> {
  const found = await listAll(store, prefix);
  const host: HeadKey[] = [];
  const hosts = new Set<string>();
  for (const k of found) {
    const h = parseHeadKey(account, k);
    if (!h || h.session !== env.session) continue; // a key under the prefix that is not a head is not ours to interpret
    hosts.add(h.host);
    if (h.host === env.host) host.push({ key: k, seq: h.seq });
  }
  return { host, hosts: wide ? hosts.size : null };
}

/**
 * For a push whose host's head lags behind seq - 1 (a crash between a batch write and its head write): whether batch
 * seq - 1 is stored (else the seq gap is refused) and whether batch seq itself already is (a retry), from one listing
 * of the two keys. A retry then skips its putIfAbsent, so the lagging path costs no more calls than a new session's
 * first batch (PER_BATCH_OPS in routes/multi-batches.ts): keys have fixed-width seqs, so the two are listed in order.
 */
async function laggingBatches(store: BlobStore, account: string, session: string, env: BatchEnvelope): Promise<boolean> {
  const prefix = keys.batchPrefix(account, session, env.host);
  const page = await store.list({ prefix, limit: 2, ...(env.seq > 2 ? { startAfter: keys.batch(account, session, env.host, env.seq - 2) } : {}) });
  if (!page.keys.includes(keys.batch(account, session, env.host, env.seq - 1))) {
    throw new SessyncError('conflict', `seq gap: host ${env.host} has no batch ${env.seq - 1} in session ${session}; push batches in order starting at 1`);
  }
  return page.keys.includes(keys.batch(account, session, env.host, env.seq));
}

/**
 * Records `seq` as this host's head unless a newer head is already there, then removes older heads; `onHead` is
 * called once the head write made the head. Runs on 'exists' too: it repairs a crash between the batch write and
 * the head write.
 */
async function advanceHead(store: BlobStore, account: string, env: BatchEnvelope, existing: HeadKey[], onHead: () => void): Promise<void> {
  // Whether this push's write made the head: the batch becomes visible here, and is counted by the push that did it.
  let made = false;
  if (!existing.some((h) => h.seq >= env.seq)) {
    // Empty: its key says all a reader uses (session, host, seq), and an empty object costs the file store no temp
    // file (FsStore.createEmpty). Heads an older server wrote hold `{seq, batchId}`, which nothing reads.
    made = await store.putIfAbsent(keys.head(account, env.session, env.host, env.seq), EMPTY);
  }
  if (made) onHead();
  const top = Math.max(env.seq, ...existing.map((h) => h.seq));
  // Older heads are redundant; a racing push of a newer seq only ever deletes keys below its own.
  await Promise.all(existing.filter((h) => h.seq < top).map((h) => store.delete(h.key)));
}

export function metaRecord(meta: AnySessionMetaInput, created = new Date().toISOString()): StoredMeta {
  if (isSealedMetaInput(meta)) return { projectKey: meta.projectKey, sealed: meta.sealed, created };
  const record: StoredMeta = { header: meta.header, projectKey: meta.projectKey, created };
  if (meta.name !== undefined) record.name = meta.name;
  return record;
}

/** What a stored meta object is, as far as a push cares: sealed (with its wrap), plaintext, or damaged (its GET reports that). */
function storedMetaKind(body: Uint8Array): { kind: 'sealed'; keyId: unknown; wrappedKey: unknown } | { kind: 'plain' | 'damaged' } {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch {
    return { kind: 'damaged' }; // not this push's business: GET /v1/sessions/:session answers it as corrupt
  }
  if (typeof value !== 'object' || value === null) return { kind: 'damaged' };
  const sealed = (value as { sealed?: unknown }).sealed;
  if (typeof sealed === 'object' && sealed !== null) return { kind: 'sealed', ...(sealed as { keyId: unknown; wrappedKey: unknown }) };
  return { kind: 'header' in value ? 'plain' : 'damaged' };
}

/**
 * Throws for a sealed meta pushed onto a session whose stored meta is still plaintext: the account is being converted
 * and the converting machine has not sealed this session yet, so no session key exists on the server; a key this
 * push made up would not be the one the conversion seals, and its batches would be unreadable. Also for entries
 * sealed under another data key than the stored meta's (refuseOtherDataKey).
 */
function checkMetaState(session: string, req: Pick<BatchPush, 'envelope' | 'meta'>, stored: BlobObject | null): void {
  const meta = req.meta;
  if (!meta || !stored || !isSealedMetaInput(meta)) return;
  const was = storedMetaKind(stored.body);
  if (was.kind === 'sealed') refuseOtherDataKey(session, req.envelope, meta.sealed, was);
  if (was.kind !== 'plain') return;
  throw new SessyncError(
    'conflict',
    `session ${session} is still plaintext on this server: the account's conversion to end-to-end encryption has not sealed it yet; run \`sessync key init\` again to finish the conversion, then push`,
    { details: { metaPlaintext: true } }, // a client announcing a session tells this from a seq conflict
  );
}

/**
 * Whether the push's sealed meta wraps another session key than the stored one (two machines made the same session
 * id): the stored meta stays, and the client is told so it re-encrypts under the stored key. The meta is stored once,
 * as first pushed: `stored` is what was read before the writes (clients may send meta with every push, so the common
 * case costs that one read), `created` whether this push's write of it made it. A plaintext meta already there is
 * simply kept: only a sealed one's wrap is compared.
 */
async function metaMismatchOf(store: BlobStore, key: string, stored: BlobObject | null, meta: AnySessionMetaInput, created: boolean): Promise<boolean> {
  if (created || !isSealedMetaInput(meta)) return false;
  stored ??= await store.get(key);
  if (!stored) return false;
  const was = storedMetaKind(stored.body);
  return was.kind === 'sealed' && (was.keyId !== meta.sealed.keyId || was.wrappedKey !== meta.sealed.wrappedKey);
}

/** putIfAbsent of each write, as one group where the store has one (one fsync round on the file system). */
function putAllIfAbsent(store: BlobStore, writes: readonly BlobWrite[]): Promise<boolean[]> {
  return store.writeMany ? store.writeMany(writes) : Promise.all(writes.map((w) => store.putIfAbsent(w.key, w.body)));
}

/**
 * The quota's admission of a batch not covered by a head. A batch refused for room may be stored already, its head
 * lost (a crash, a failed write beside it): such a resend is on the disk already and takes no new room, so it is
 * looked up then (one read, on the refusal path only) and admitted without the room check. `present`: the lagging
 * head's listing found it stored.
 */
async function admitBatch(store: BlobStore, admit: QuotaGate, account: string, session: string, req: BatchPush, bytes: number, present: boolean): Promise<ReturnType<QuotaGate>> {
  try {
    return admit(bytes, { stored: present });
  } catch (e) {
    if (!isSessyncError(e, 'too_large') || bytes === 0 || present || (e.details as { quota?: unknown } | undefined)?.quota !== 'maxBytes') throw e;
    const env = req.envelope;
    const stored = await readBatch(store, keys.batch(account, session, env.host, env.seq));
    if (!stored || isDamaged(stored) || !(await sameBatch(stored, req))) throw e;
    return admit(bytes, { stored: true });
  }
}

/**
 * Validates and stores one push for `account` (whose key record is `accountKey`, null for a plaintext account):
 * append-only, idempotent, gapless per host; the same batch retried is stored once. Everything is checked and
 * serialised before the first write: a refused or unserialisable part must not leave a batch behind with no head
 * and no meta. Throws a SessyncError for anything refused.
 */
export async function storeOneBatch(store: BlobStore, account: string, session: string, req: BatchPush, accountKey: StoredAccountKey | null): Promise<PushBatchResponse> {
  const bodyBytes = await validateBatch(session, req);
  checkPushEncryption(accountKey, req);
  if (req.meta && !isSealedMetaInput(req.meta)) validateMeta(req.meta, session);
  const env = req.envelope;
  // Binary, the body's bytes as they came: never escaped into JSON, never base64'd (a JSON push's base64 stays as sent).
  // `received` is written only by the putIfAbsent below that creates the record: a retry that answers `exists` keeps the first.
  const batchRecord = batchRecordParts({ envelope: env, body: req.body, base64: req.base64, fields: { received: Date.now() } });
  const meta = req.meta ? encodeJson(metaRecord(req.meta)) : null;
  const metaKey = keys.sessionMeta(account, session);
  // A plaintext meta on seq 1 (a new session, normally) is not read first: its putIfAbsent finds out, and
  // nothing about a plaintext meta is checked before the batch. A sealed one is (checkMetaState), and so is a later
  // seq's, which the stored meta usually makes unnecessary to write. Both reads go out together.
  const readMetaFirst = req.meta !== undefined && (isSealedMetaInput(req.meta) || env.seq > 1);
  const [storedMeta, listed] = await Promise.all([readMetaFirst ? store.get(metaKey) : null, listHeads(store, account, env)]);
  checkMetaState(session, req, storedMeta);
  const heads = listed.host;

  const admit = await guardPush(store, account, session, { hostHasHead: heads.length > 0, sessionHosts: listed.hosts });
  // A host new to the session: every reader lists all hosts' heads (Workers allows ~50 list pages per request).
  if (heads.length === 0 && listed.hosts !== null && listed.hosts >= LIMITS.maxHostsPerSession) {
    throw new SessyncError('too_large', `session ${session} already has batches from ${listed.hosts} hosts, the limit; push from one of them or start a new session`);
  }
  // Gapless per host: a pull walks seqs 1..head, so a hole would stall every reader. The head usually proves
  // batch seq-1 exists; only when it lags (a crash before its write) are the batches themselves looked up.
  const top = Math.max(0, ...heads.map((h) => h.seq));
  const present = env.seq > 1 && top < env.seq - 1 ? await laggingBatches(store, account, session, env) : false;
  // The quota last, once nothing else refuses the batch before its write: only a batch that is written takes room.
  // One a head already covers is counted: it adds nothing. One stored without a head (a crash, a write whose reply
  // was lost) is counted by the push that writes its head, so it is admitted like a new one, except that it is never
  // refused for room: it is on the disk already, and refusing its resend would free nothing.
  const covered = top >= env.seq;
  const settle = await admitBatch(store, admit, account, session, req, covered ? 0 : bodyBytes, present);
  // What the push counts: the batch's bytes once its head write made the head (also if a later step throws), as the
  // batch is stored (the stored record's size when the push found it stored), 0 when no head write of its made one.
  const written = { head: false, bytes: bodyBytes };
  try {
    const w = await writeBatch(store, account, session, req, { batchRecord, meta, storedMeta, present, heads, written });
    await settle(written.head ? 'created' : 'exists', written.bytes);
    const res: PushBatchResponse = { status: w.status, session, host: env.host, seq: env.seq };
    if (w.metaMismatch) res.metaMismatch = true;
    return res;
  } catch (e) {
    // A batch whose head this push made before the failure is counted: its retry finds the head, which adds nothing.
    await settle(written.head ? 'created' : 'failed', written.bytes).catch((counting: unknown) => {
      console.error(`sessync: the usage counter of account ${account} could not be updated after a failed push of session ${session} (setting the quota again recounts it): ${(counting as Error)?.message ?? String(counting)}`);
    });
    throw e;
  }
}

/**
 * The writes of a checked push: the batch (unless `present`) and the meta (unless one was read), the stored batch
 * compared when one was there, then the head. Throws `conflict` for a different or damaged batch at the seq.
 * `written.head` says, also when a later step throws, whether this push's write made the head; `written.bytes` is
 * the stored batch's size when the push found it stored.
 */
async function writeBatch(
  store: BlobStore,
  account: string,
  session: string,
  req: BatchPush,
  o: { batchRecord: BlobBody; meta: Uint8Array | null; storedMeta: BlobObject | null; present: boolean; heads: HeadKey[]; written: { head: boolean; bytes: number } },
): Promise<{ status: PushBatchResponse['status']; metaMismatch: boolean }> {
  const env = req.envelope;
  const { meta, storedMeta, present } = o;
  const metaKey = keys.sessionMeta(account, session);
  const batchKey = keys.batch(account, session, env.host, env.seq);
  // The meta is written with the batch, in one round: neither needs the other first, and the head below (what makes
  // the session appear on /v1/changes) goes only after both are durable, so a client that sees it finds the meta
  // too; a failure in between leaves no head, and the client's retry, which carries the meta again, completes both.
  // A batch refused below, after its write (another batch there, or a damaged one), may so leave this push's meta
  // behind, which is harmless: without a head of its own the push shows nowhere, a meta is kept as first stored
  // whoever pushed it (any pusher of the session id could have been first), and a sealed one's wrap is what later
  // pushes are compared with (metaMismatch) as before. Not written when one was read: that one stays.
  const writeMeta = meta !== null && !storedMeta;
  // A batch the lagging head's listing found stored is not written again: its putIfAbsent could only say so.
  const writes: BlobWrite[] = present ? [] : [{ key: batchKey, body: o.batchRecord }];
  if (writeMeta) writes.push({ key: metaKey, body: meta });
  const created = writes.length > 0 ? await putAllIfAbsent(store, writes) : [];
  const batchCreated = !present && created[0] === true;
  const metaCreated = writeMeta && created[writes.length - 1] === true;
  let status: PushBatchResponse['status'] = 'created';
  if (!batchCreated) {
    const stored = await readBatch(store, batchKey);
    if (!stored) throw new SessyncError('unavailable', `batch ${env.seq} of host ${env.host} was reported present but cannot be read; retry`, { retryable: true });
    if (isDamaged(stored)) {
      throw new SessyncError('conflict', `batch ${env.seq} of host ${env.host} in session ${session} is stored damaged on this server (${stored.damaged}); stored batches are never replaced: push new entries at a later seq`);
    }
    if (!(await sameBatch(stored, req))) {
      throw new SessyncError(
        'conflict',
        `host ${env.host} already stored a different batch at seq ${env.seq} (batch ${stored.envelope.batchId}); stored batches are never replaced: push new entries at a later seq`,
        { details: { storedBatchId: stored.envelope.batchId, storedSha256: stored.envelope.sha256 } },
      );
    }
    status = 'exists';
    o.written.bytes = batchBytes(stored);
  }
  const metaMismatch = req.meta ? await metaMismatchOf(store, metaKey, storedMeta, req.meta, metaCreated) : false;
  await advanceHead(store, account, env, o.heads, () => (o.written.head = true));
  return { status, metaMismatch };
}
