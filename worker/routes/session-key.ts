// PUT /v1/sessions/:session/key: re-wraps a sealed session's data key under the new account key after a rotation.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { keys } from '../../shared/keys.js';
import { PutSessionKeyRequestSchema } from '../../shared/wire.js';
import { keyMismatch, readAccountKey } from '../account-key.js';
import { requireAccount } from '../auth.js';
import { requireCurrentKey, requireEncrypted } from '../encryption-policy.js';
import { loadSessionMeta, metaResponse } from '../meta-response.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { encodeJson, isSealedMeta, nameParam } from '../session-data.js';

export const sessionKeyRoutes = new Hono<AppEnv>();

// The wrapped key is the only mutable part of a meta: batches stay as they are (encrypted under the session key,
// which does not change), so a rotation costs one small write per session.
sessionKeyRoutes.put('/v1/sessions/:session/key', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const req = await readJson(c, PutSessionKeyRequestSchema, SMALL_BODY_BYTES, 'put session key');
  const store = c.var.store;
  const accountKey = requireEncrypted(await readAccountKey(store, c.var.account), 'a session key re-wrap');
  requireCurrentKey(accountKey, req, 'the re-wrapped session key');
  const { meta, heads } = await loadSessionMeta(store, c.var.account, session);
  if (!isSealedMeta(meta)) {
    throw new SessyncError('conflict', `session ${session}'s meta is still plaintext on this server, so it has no session key to re-wrap; \`sessync key init\` seals it first`);
  }
  if (meta.sealed.keyId === req.keyId) {
    // A re-run of an interrupted rotation: already done.
    if (meta.sealed.wrappedKey === req.wrappedKey) return c.json(metaResponse(session, meta, heads));
    throw keyMismatch(`session ${session}'s key is already wrapped under ${req.keyId}, with another wrapped key than this one`);
  }
  if (meta.sealed.keyId !== req.replaces) throw keyMismatch(`session ${session}'s key is wrapped under ${meta.sealed.keyId}, not ${req.replaces}`);
  const next = { ...meta, sealed: { ...meta.sealed, keyId: req.keyId, wrappedKey: req.wrappedKey } };
  await store.put(keys.sessionMeta(c.var.account, session), encodeJson(next));
  return c.json(metaResponse(session, next, heads));
});
