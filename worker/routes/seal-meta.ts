// PUT /v1/sessions/:session/meta/seal: replaces a plaintext session meta by its sealed form in place (converting an account).
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { SealMetaRequestSchema, type SealedMeta } from '../../shared/wire.js';
import { readAccountKey } from '../account-key.js';
import { requireAccount } from '../auth.js';
import { requireCurrentKey, requireEncrypted } from '../encryption-policy.js';
import { loadSessionMeta, metaResponse } from '../meta-response.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { encodeJson, isSealedMeta, nameParam, type StoredSealedMeta } from '../session-data.js';

export const sealMetaRoutes = new Hono<AppEnv>();

function sameSealed(a: SealedMeta, b: SealedMeta): boolean {
  return a.keyId === b.keyId && a.wrappedKey === b.wrappedKey && a.ciphertext === b.ciphertext;
}

// A meta is otherwise kept as first pushed; this is the one replacement of it (with the re-wrap of session-key.ts).
// Heads, batches and tombstones are untouched, so other machines' cursors stay valid.
sealMetaRoutes.put('/v1/sessions/:session/meta/seal', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const req = await readJson(c, SealMetaRequestSchema, SMALL_BODY_BYTES, 'seal session meta');
  const store = c.var.store;
  const accountKey = requireEncrypted(await readAccountKey(store, c.var.account), 'sealing a session meta');
  requireCurrentKey(accountKey, req.sealed, 'the sealed meta');
  const { meta, heads } = await loadSessionMeta(store, c.var.account, session);
  if (isSealedMeta(meta)) {
    // A re-run of an interrupted conversion: already done.
    if (meta.projectKey === req.projectKey && sameSealed(meta.sealed, req.sealed)) return c.json(metaResponse(session, meta, heads));
    throw new SessyncError('conflict', `session ${session}'s meta is already sealed on this server, with other content; a sealed meta is not sealed again (\`sessync key status\` shows its state)`);
  }
  // The header's own timestamp stays the session's `created` (the server saw it anyway, and it is only a time).
  const created = typeof meta.header.timestamp === 'string' ? meta.header.timestamp : meta.created;
  const next: StoredSealedMeta = { projectKey: req.projectKey, sealed: req.sealed, created };
  await store.put(keys.sessionMeta(c.var.account, session), encodeJson(next));
  return c.json(metaResponse(session, next, heads));
});
