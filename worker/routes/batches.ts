// POST /v1/sessions/:session/batches: append-only, idempotent, gapless per host; the same batch retried is stored once.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { BlobStore } from '../store/blob-store.js';
import { SessyncError } from '../../shared/errors.js';
import { keys, parseHeadKey } from '../../shared/keys.js';
import { isSealedMetaInput, LIMITS, PushBatchRequestSchema, type BatchEnvelope, type PushBatchRequest, type PushBatchResponse, type SessionMetaInput } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { validateBatch, validateMeta } from '../batch-validate.js';
import { guardPush } from '../push-guard.js';
import { readJson } from '../request-body.js';
import { encodeJson, isDamaged, keyExists, listAll, nameParam, readBatch, sessionHeads, type StoredMeta } from '../session-data.js';

export const batchesRoutes = new Hono<AppEnv>();

function sameBatch(a: BatchEnvelope, b: BatchEnvelope): boolean {
  return a.sha256 === b.sha256 && a.batchId === b.batchId && a.entryCount === b.entryCount && a.encoding === b.encoding;
}

/** This host's head keys in the session (normally one; more only while a push is between its head write and its cleanup). */
async function hostHeads(store: BlobStore, account: string, env: BatchEnvelope): Promise<{ key: string; seq: number }[]> {
  return (await listAll(store, keys.hostHeadsPrefix(account, env.session, env.host))).flatMap((k) => {
    const h = parseHeadKey(account, k);
    return h ? [{ key: k, seq: h.seq }] : [];
  });
}

/**
 * Records `seq` as this host's head unless a newer head is already there, then removes older heads.
 * Runs on 'exists' too: it repairs a crash between the batch write and the head write.
 */
async function advanceHead(store: BlobStore, account: string, env: BatchEnvelope, existing: { key: string; seq: number }[]): Promise<void> {
  if (!existing.some((h) => h.seq >= env.seq)) {
    await store.putIfAbsent(keys.head(account, env.session, env.host, env.seq), encodeJson({ seq: env.seq, batchId: env.batchId }));
  }
  const top = Math.max(env.seq, ...existing.map((h) => h.seq));
  // Older heads are redundant; a racing push of a newer seq only ever deletes keys below its own.
  await Promise.all(existing.filter((h) => h.seq < top).map((h) => store.delete(h.key)));
}

function metaRecord(meta: SessionMetaInput): StoredMeta {
  const record: StoredMeta = { header: meta.header, projectKey: meta.projectKey, created: new Date().toISOString() };
  if (meta.name !== undefined) record.name = meta.name;
  return record;
}

/** Stores the session's meta once, as first pushed; a cheap read first because clients may send meta with every push. */
async function storeMeta(store: BlobStore, account: string, session: string, encoded: Uint8Array): Promise<void> {
  const key = keys.sessionMeta(account, session);
  if (await store.get(key)) return;
  await store.putIfAbsent(key, encoded);
}

/** A push checked and serialised in full, ready for storePush: nothing about it is refused after the first write. */
export interface PreparedPush {
  session: string;
  envelope: BatchEnvelope;
  body: string;
  batchRecord: Uint8Array;
  meta: Uint8Array | null;
}

/**
 * Every check of a push that needs no write, and its serialisation: a refused or unserialisable part must not
 * leave a batch behind with no head and no meta. Throws a 4xx SessyncError. The single and the multi-session
 * route both run it on every batch before either stores anything.
 */
export async function preparePush(session: string, req: PushBatchRequest): Promise<PreparedPush> {
  await validateBatch(session, req);
  if (req.meta && isSealedMetaInput(req.meta)) {
    throw new SessyncError('not_encrypted', 'this account is not end-to-end encrypted, so it takes no sealed meta; run `sessync key init` to encrypt it');
  }
  if (req.meta) validateMeta(req.meta);
  const env = req.envelope;
  return { session, envelope: env, body: req.body, batchRecord: encodeJson({ envelope: env, body: req.body }), meta: req.meta ? encodeJson(metaRecord(req.meta)) : null };
}

/** Stores one prepared batch: idempotent (the same batch again is `exists`), gapless per host, meta before head. */
export async function storePush(store: BlobStore, account: string, p: PreparedPush): Promise<PushBatchResponse> {
  const { session, envelope: env, meta } = p;
  // Gapless per host: a pull walks seqs 1..head, so a hole would stall every reader. The head usually proves
  // batch seq-1 exists; only when it lags (a crash before its write) is the batch itself looked up.
  const heads = await hostHeads(store, account, env);
  const afterStore = await guardPush(store, account, session, { hostHasHead: heads.length > 0, body: p.body });
  // A host new to the session: every reader lists all hosts' heads (Workers allows ~50 list pages per request).
  if (heads.length === 0 && env.seq === 1) {
    const hosts = (await sessionHeads(store, account, session)).size;
    if (hosts >= LIMITS.maxHostsPerSession) {
      throw new SessyncError('too_large', `session ${session} already has batches from ${hosts} hosts, the limit; push from one of them or start a new session`);
    }
  }
  const top = Math.max(0, ...heads.map((h) => h.seq));
  if (env.seq > 1 && top < env.seq - 1 && !(await keyExists(store, keys.batch(account, session, env.host, env.seq - 1)))) {
    throw new SessyncError('conflict', `seq gap: host ${env.host} has no batch ${env.seq - 1} in session ${session}; push batches in order starting at 1`);
  }

  const batchKey = keys.batch(account, session, env.host, env.seq);
  let status: PushBatchResponse['status'] = 'created';
  if (!(await store.putIfAbsent(batchKey, p.batchRecord))) {
    const stored = await readBatch(store, batchKey);
    if (!stored) throw new SessyncError('unavailable', `batch ${env.seq} of host ${env.host} was reported present but cannot be read; retry`, { retryable: true });
    if (isDamaged(stored)) {
      throw new SessyncError('conflict', `batch ${env.seq} of host ${env.host} in session ${session} is stored damaged on this server (${stored.damaged}); stored batches are never replaced: push new entries at a later seq`);
    }
    if (!sameBatch(stored.envelope, env)) {
      throw new SessyncError(
        'conflict',
        `host ${env.host} already stored a different batch at seq ${env.seq} (batch ${stored.envelope.batchId}); stored batches are never replaced: push new entries at a later seq`,
        { details: { storedBatchId: stored.envelope.batchId, storedSha256: stored.envelope.sha256 } },
      );
    }
    status = 'exists';
  }
  // Both only after the batch is safely stored, and the meta before the head: the head is what makes the session
  // appear on /v1/changes, so a client that sees it must find the meta too (a failure in between leaves no head
  // and the client's retry, which carries the meta again, completes both).
  if (meta) await storeMeta(store, account, session, meta);
  await advanceHead(store, account, env, heads);
  await afterStore(status === 'created');
  return { status, session, host: env.host, seq: env.seq };
}

batchesRoutes.post('/v1/sessions/:session/batches', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const req = await readJson(c, PushBatchRequestSchema, LIMITS.maxRequestBytes, 'push batch');
  const prepared = await preparePush(session, req);
  const res = await storePush(c.var.store, c.var.account, prepared);
  return c.json(res, res.status === 'created' ? 201 : 200);
});
