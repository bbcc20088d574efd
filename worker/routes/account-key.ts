// GET/PUT /v1/account/key: whether the account is end-to-end encrypted, under which key id, and its key check.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { PutAccountKeyRequestSchema } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { readJson, SMALL_BODY_BYTES } from '../request-body.js';
import { accountKeyResponse, putAccountKey, readAccountKey } from '../account-key.js';

export const accountKeyRoutes = new Hono<AppEnv>();

accountKeyRoutes.get('/v1/account/key', requireAccount, async (c) => {
  return c.json(accountKeyResponse(await readAccountKey(c.var.store, c.var.account)));
});

// Irreversible: there is no route back to plaintext (a downgrade would let a server take plaintext again).
accountKeyRoutes.put('/v1/account/key', requireAccount, async (c) => {
  const req = await readJson(c, PutAccountKeyRequestSchema, SMALL_BODY_BYTES, 'put account key');
  return c.json(accountKeyResponse(await putAccountKey(c.var.store, c.var.account, req)));
});
