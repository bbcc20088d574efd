// POST /v1/sessions/:session/batches (one frame, or JSON): append-only, idempotent, gapless per host; a retry is stored once.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { readAccountKey } from '../account-key.js';
import { requireAccount } from '../auth.js';
import { readSinglePush } from '../push-items.js';
import { nameParam } from '../session-data.js';
import { storeOneBatch } from '../store-batch.js';

export const batchesRoutes = new Hono<AppEnv>();

batchesRoutes.post('/v1/sessions/:session/batches', requireAccount, async (c) => {
  const session = nameParam(c, 'session', 'session id');
  const req = await readSinglePush(c, 'push batch'); // one frame, or JSON from an older client
  // Whether the account is encrypted decides what it takes: read on every push, so no downgrade slips in after a key PUT.
  const accountKey = await readAccountKey(c.var.store, c.var.account);
  const res = await storeOneBatch(c.var.store, c.var.account, session, req, accountKey);
  return c.json(res, res.status === 'created' ? 201 : 200);
});
