// Pulled batches of an encrypted account, opened and authenticated before any of them is merged.
import { isUtf8 } from 'node:buffer';
import { SessyncError } from '../../shared/errors.js';
import { deriveSessionKey, openBatchPlain, type SessionKey } from '../../shared/sync-crypto.js';
import type { PulledBatchIn, SessionMetaResponse } from '../../shared/wire.js';
import type { BatchProblem } from '../sync/session-sync-state.js';
import type { SyncContext } from '../sync/sync-context.js';
import { sessionKey, type E2eKeys } from './sync-keys.js';

/**
 * Every batch of the page opened under the session key, bound to its own envelope: a batch flipped, swapped with
 * another, replayed at another seq, or sealed under another key fails, and so does a plaintext batch (an encrypted
 * account stores none). One failure refuses the whole page for the session, named by host and seq, before anything
 * of it is written; the cursor does not move, so every run reports it again. Damaged objects pass through to the
 * usual report. The opened batches come back as JSONL, marked authenticated (their sha-256 is of the ciphertext).
 */
/** A pulled batch, opened when it was sealed: `authenticated` stands for the sha-256 check, which GCM's tag supersedes. */
export type OpenedBatch = PulledBatchIn & { authenticated?: true };

/** `meta`: the session's meta when the page carried it (its wrapped key then needs no GET). */
export async function openPulled(ctx: SyncContext, e2e: E2eKeys, session: string, batches: readonly PulledBatchIn[], meta?: SessionMetaResponse): Promise<OpenedBatch[]> {
  if (batches.length === 0) return [];
  const key = await sessionKey(ctx, e2e, session, { create: false, ...(meta ? { meta } : {}) });
  /** The key derived for this session's id, when it is not the meta's: tried only on a batch that fails under that. */
  let derived: Promise<SessionKey | null> | undefined;
  const otherKey = () => (derived ??= deriveSessionKey(e2e.keys, session).then((d) => (d.wrappedKey === key.wrappedKey && d.keyId === key.keyId ? null : d)));
  const out: OpenedBatch[] = [];
  const failed: BatchProblem[] = [];
  for (const b of batches) {
    if (b.damaged !== undefined) {
      out.push(b);
      continue;
    }
    const { host, seq, batchId, entryCount } = b.envelope;
    if (b.envelope.encoding !== 'aes-256-gcm') {
      failed.push({ host, seq, reason: 'a plaintext batch on an end-to-end encrypted account (not written by sessync)' });
      continue;
    }
    const binding = { account: e2e.account, session, host, seq, batchId, entryCount };
    // Bytes, not text: the pull decodes them once for its parse and writes them as they are (never encoded again).
    let text: Uint8Array | null;
    try {
      const bytes = sealedBytes(b);
      text = await openBatchPlain(key, binding, bytes);
      // Entries sealed under the key derived for the session while its meta holds another (a push that raced an older
      // client's, or met a server that stores before it compares): only a holder of the account key could derive it.
      if (text === null && entryCount > 0) {
        const other = await otherKey();
        if (other) text = await openBatchPlain(other, binding, bytes);
      }
      if (text !== null && !isUtf8(text)) text = null; // authenticated bytes that are not UTF-8 were never written by sessync
    } catch {
      text = null; // not even base64: as unauthenticated as a flipped byte
    }
    if (text === null && entryCount === 0) {
      // An empty batch sealed under another key: the announcement of an older client that made the same session id
      // under a random key and lost. It holds nothing, so it is reported and passed over instead of refusing the session; a
      // server that hid a batch this way could as well have withheld it.
      ctx.note?.(`session ${session}: empty batch ${seq} of host ${host} fails authentication (sealed under another data key?); it holds no entries, passed over`);
      out.push({ envelope: { ...b.envelope, encoding: 'jsonl' }, body: '', authenticated: true });
      continue;
    }
    if (text === null) {
      failed.push({ host, seq, reason: 'it fails authentication (altered, moved from another session, host or seq, or sealed under another key)' });
      continue;
    }
    out.push({ envelope: { ...b.envelope, encoding: 'jsonl' }, body: text, authenticated: true });
  }
  if (failed.length > 0) {
    const named = failed.slice(0, 3).map((f) => `batch ${f.seq} of host ${f.host}: ${f.reason}`).join('; ');
    const more = failed.length > 3 ? `; and ${failed.length - 3} more` : '';
    throw new SessyncError('corrupt', `session ${session}: refused, nothing of it written: ${named}${more}. The server's copy was tampered with, or a machine wrote it with another key`, { details: { problems: failed.slice(0, 100) } });
  }
  return out;
}

const latin1 = new TextDecoder('latin1');

/**
 * The sealed bytes of a pulled batch: raw from a frames answer; base64 text from a JSON answer, or in a frame marked
 * `base64` (pushed by an older client). Buffer.from skips what is not base64 instead of failing: the tag then fails,
 * as for any altered byte.
 */
function sealedBytes(b: PulledBatchIn): Uint8Array {
  if (typeof b.body === 'string') return Buffer.from(b.body, 'base64');
  return b.base64 ? Buffer.from(latin1.decode(b.body), 'base64') : b.body;
}
