// Admin routes (admin secret): create accounts, issue, list and revoke any account's tokens, set quotas.
import { Hono } from 'hono';
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { CreateAccountRequestSchema, CreateTokenRequestSchema, QuotaSchema, type CreateAccountResponse } from '../../shared/wire.js';
import type { BlobStore } from '../store/blob-store.js';
import { accountExists, createAccount, requireAdmin } from '../auth.js';
import { quotaReport, setQuota } from '../quota.js';
import { issueTokenRecord, listTokens, revokeToken } from '../tokens.js';
import { parseJson, readBodyText, SMALL_BODY_BYTES } from '../request-body.js';
import { nameParam } from '../session-data.js';

/** Admin routes; `secretOf` says where the admin secret comes from on this runtime. */
export function adminRoutes(secretOf: (c: Context<AppEnv>) => string | undefined): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.use('/v1/admin/*', requireAdmin(secretOf));

  r.post('/v1/admin/accounts', async (c) => {
    const text = await readBodyText(c, SMALL_BODY_BYTES);
    // An empty body is fine here: the name is optional.
    const input = text.trim() === '' ? {} : parseJson(text, CreateAccountRequestSchema, 'create account');
    const res: CreateAccountResponse = await createAccount(c.var.store, input.name);
    return c.json(res, 201);
  });

  r.post('/v1/admin/accounts/:account/tokens', async (c) => {
    const account = nameParam(c, 'account', 'account id');
    const text = await readBodyText(c, SMALL_BODY_BYTES); // read even when empty, so an oversized body is still refused
    const input = text.trim() === '' ? {} : parseJson(text, CreateTokenRequestSchema, 'create token');
    await mustExist(c.var.store, account);
    const issued = await issueTokenRecord(c.var.store, account, input.name);
    return c.json(issued, 201);
  });

  r.get('/v1/admin/accounts/:account/tokens', async (c) => {
    const account = nameParam(c, 'account', 'account id');
    await mustExist(c.var.store, account);
    return c.json({ tokens: await listTokens(c.var.store, account) });
  });

  // Revokes any token of any account: the way out when a user cannot reach their own machines.
  r.delete('/v1/admin/accounts/:account/tokens/:id', async (c) => {
    const account = nameParam(c, 'account', 'account id');
    const id = c.req.param('id');
    if (!(await revokeToken(c.var.store, account, id))) throw new SessyncError('not_found', `account ${account} has no token ${JSON.stringify(id.slice(0, 80))}`);
    return c.json({ revoked: true as const, id });
  });

  r.get('/v1/admin/accounts/:account/quota', async (c) => {
    const account = nameParam(c, 'account', 'account id');
    await mustExist(c.var.store, account);
    return c.json(await quotaReport(c.var.store, account));
  });

  // Sets (or with {} clears) the account's quota, and counts its usage once so later pushes only add to it.
  r.put('/v1/admin/accounts/:account/quota', async (c) => {
    const account = nameParam(c, 'account', 'account id');
    const quota = parseJson(await readBodyText(c, SMALL_BODY_BYTES), QuotaSchema, 'set quota');
    await mustExist(c.var.store, account);
    return c.json(await setQuota(c.var.store, account, quota));
  });
  return r;
}

async function mustExist(store: BlobStore, account: string): Promise<void> {
  if (!(await accountExists(store, account))) throw new SessyncError('not_found', `account ${account} not found`);
}
