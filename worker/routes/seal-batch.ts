// PUT /v1/sessions/:session/batches/:host/:seq/seal: replaces a stored jsonl batch by its ciphertext in place (converting an account).
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { LIMITS, SealBatchRequestSchema, type SealBatchResponse } from '../../shared/wire.js';
import { readAccountKey } from '../account-key.js';
import { requireAccount } from '../auth.js';
import { bodyLength, jsonPush, validateBatch } from '../batch-validate.js';
import { requireEncrypted } from '../encryption-policy.js';
import { addBytes, readQuota } from '../quota.js';
import { readJson } from '../request-body.js';
import { batchBytes, batchRecordParts, isDamaged, nameParam, readBatch } from '../session-data.js';
import { findTombstone, goneSession } from '../session-delete.js';

export const sealBatchRoutes = new Hono<AppEnv>();

function bad(message: string): SessyncError {
  return new SessyncError('bad_input', message);
}

/** The seq in the URL: the same range as an envelope's. */
function seqParam(raw: string | undefined): number {
  if (!raw || !/^\d{1,12}$/.test(raw) || Number(raw) < 1) throw bad(`seq "${(raw ?? '').slice(0, 40)}" in the URL is not a batch seq (1 to 999999999999)`);
  return Number(raw);
}

// The one exception to "stored batches are never replaced": a plaintext account's batches are sealed where they are,
// so heads, seqs and every machine's cursors stay valid and nothing is pulled twice. One put of the whole object,
// atomic on every store: a pull that races it serves the old batch or the new, never a mix.
sealBatchRoutes.put('/v1/sessions/:session/batches/:host/:seq/seal', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const host = nameParam(c, 'host', 'host id');
  const seq = seqParam(c.req.param('seq'));
  const req = await readJson(c, SealBatchRequestSchema, LIMITS.maxRequestBytes, 'seal batch');
  const env = req.envelope;
  if (env.host !== host || env.seq !== seq) throw bad(`envelope names host ${env.host} seq ${env.seq}, but the URL host ${host} seq ${seq}`);
  if (env.encoding !== 'aes-256-gcm') throw bad('a sealed batch has envelope.encoding "aes-256-gcm"');
  const push = jsonPush(req);
  await validateBatch(session, push);
  const store = c.var.store;
  const account = c.var.account;
  requireEncrypted(await readAccountKey(store, account), 'sealing a batch');

  const key = keys.batch(account, session, host, seq);
  const [stored, tomb] = await Promise.all([readBatch(store, key), findTombstone(store, account, session)]);
  if (tomb) throw goneSession(tomb);
  if (!stored) throw new SessyncError('not_found', `session ${session} has no batch ${seq} of host ${host} on this server`);
  if (isDamaged(stored)) throw new SessyncError('conflict', `batch ${seq} of host ${host} in session ${session} is stored damaged (${stored.damaged}); it cannot be sealed`);
  const was = stored.envelope;
  const res: SealBatchResponse = { status: 'sealed', session, host, seq };
  if (was.batchId !== env.batchId || was.entryCount !== env.entryCount) {
    throw new SessyncError('conflict', `batch ${seq} of host ${host} is stored as batch ${was.batchId} of ${was.entryCount} entries, not ${env.batchId} of ${env.entryCount}; seal what is stored`);
  }
  if (was.encoding === 'aes-256-gcm') {
    // A re-run of an interrupted conversion: already sealed with this very body.
    if (was.sha256 === env.sha256) return c.json({ ...res, status: 'exists' } satisfies SealBatchResponse);
    throw new SessyncError('conflict', `batch ${seq} of host ${host} in session ${session} is already ciphertext, with another body; a sealed batch is not sealed again`);
  }
  // Seals pass even over quota (they only grow the batch by its base64 and tag), or a conversion could strand an
  // account that takes no plaintext any more; the counter follows, so later pushes see the real size. A damaged quota
  // record (logged by the read) is passed the same way and counted as a quota: refusing would block the conversion
  // until the admin mends the record, and setting the quota again (which mends it) recounts the usage anyway.
  const quotaOn = await readQuota(store, account).then(
    (q) => q !== null,
    (e: unknown) => {
      if (!isSessyncError(e, 'corrupt')) throw e;
      console.error(`sessync: sealing batch ${seq} of host ${host} in session ${session} of account ${account} over its damaged quota record`);
      return true;
    },
  );
  // Sealed where it is, received when it was (its other fields kept): the order the server vouches for does not change with the encoding.
  await store.put(key, batchRecordParts({ ...push, fields: stored.fields }));
  if (quotaOn) await addBytes(store, account, bodyLength(push.body) - batchBytes(stored));
  return c.json(res);
});
