// `sessync key init`: a plaintext account made end-to-end encrypted in place (every stored batch and meta sealed, seqs kept); re-running finishes it.
import { createHash } from 'node:crypto';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import type { Cursor, SessionMetaResponse } from '../../shared/wire.js';
import type { SyncContext } from '../sync/sync-context.js';
import { sealedBody, sealedMeta } from './seal-push.js';
import { createAccountKey, type KeyScope } from './key-actions.js';
import { loadKey } from './key-store.js';
import { savedOrDerivedKey, verifyKey, type E2eKeys } from './sync-keys.js';

export interface ConvertResult {
  /** The export string when this run created the account key (shown once). */
  exported?: string;
  keyId: string;
  sessions: number;
  sealedBatches: number;
  sealedMetas: number;
  /** Stored objects this run could not seal (damaged), named: they stay as the server has them. */
  left: { session: string; host?: string; seq?: number; reason: string }[];
  plaintextLeft?: number;
}

/**
 * Order, so that a kill -9 anywhere and a re-run lose nothing and leave no plaintext: the key is saved here, then
 * sent (the account then refuses plaintext pushes); per session, its data key is the one derived for its id (a
 * re-run, here or on another machine, derives it again; one written down by an older client's run is reused), its
 * batches are sealed in place (host and seq kept, so other machines' cursors stay valid), and its meta last, which
 * marks the session done. A re-run skips what is sealed.
 */
export async function convertAccount(s: KeyScope, ctx: SyncContext, note: (t: string) => void): Promise<ConvertResult> {
  let remote = await s.api.accountKey();
  let exported: string | undefined;
  if (!remote.encrypted) {
    const made = await createAccountKey(s);
    exported = made.exported;
    remote = made.remote;
    if (!remote.encrypted) throw new SessyncError('internal', 'the server did not record the account key');
  }
  const stored = await loadKey(s.env, s.api.url, s.account);
  const keys = await verifyKey(remote, stored?.key ?? null);
  const e2e: E2eKeys = { account: s.account, keys: keys!, sessionKeys: new Map() };
  const result: ConvertResult = { ...(exported ? { exported } : {}), keyId: remote.keyId, sessions: 0, sealedBatches: 0, sealedMetas: 0, left: [] };
  const sessions = [...new Set((await s.api.allHeads()).map((h) => h.session))];
  for (const session of sessions) {
    let meta: SessionMetaResponse;
    try {
      meta = await s.api.sessionMeta(session);
    } catch (e) {
      if (isSessyncError(e, 'not_found')) continue; // heads without a meta: nothing stored to seal
      if (isSessyncError(e, 'corrupt')) {
        result.left.push({ session, reason: e.message });
        continue;
      }
      throw e;
    }
    result.sessions++;
    if (meta.sealed) continue; // done by an earlier run: its batches were sealed before its meta
    const key = await savedOrDerivedKey(ctx, e2e, session);
    let cursor: Cursor = {};
    for (;;) {
      const page = await s.api.pull(session, cursor);
      for (const b of page.batches) {
        const env = b.envelope;
        if (b.damaged !== undefined || (env.encoding === 'jsonl' && createHash('sha256').update(b.body, 'utf8').digest('hex') !== env.sha256)) {
          result.left.push({ session, host: env.host, seq: env.seq, reason: `stored damaged (${b.damaged ?? 'its body does not match its sha-256'}); not sealed` });
          continue;
        }
        if (env.encoding !== 'jsonl') continue; // sealed by an earlier run
        const sealed = await sealedBody(e2e, key, { session, host: env.host, seq: env.seq, batchId: env.batchId, entryCount: env.entryCount }, b.body);
        await s.api.sealStoredBatch({ envelope: { ...env, encoding: 'aes-256-gcm', sha256: sealed.sha256 }, body: sealed.body });
        result.sealedBatches++;
      }
      cursor = page.cursor;
      if (!page.more) break;
    }
    if (!meta.header) {
      result.left.push({ session, reason: 'its meta has no header to seal' });
      continue;
    }
    const sm = await sealedMeta(e2e, key, session, { header: meta.header, projectKey: meta.projectKey, ...(meta.name !== undefined ? { name: meta.name } : {}) });
    await s.api.sealStoredMeta(session, sm);
    result.sealedMetas++;
    note(`session ${session}: sealed`);
  }
  const after = await s.api.accountKey();
  if (after.encrypted && after.plaintextLeft !== undefined) result.plaintextLeft = after.plaintextLeft;
  return result;
}
