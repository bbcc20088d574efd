// Admin routes (admin secret): create accounts and extra tokens.
import { Hono } from 'hono';
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { CreateAccountRequestSchema, type CreateAccountResponse } from '../../shared/wire.js';
import { accountExists, createAccount, issueToken, requireAdmin } from '../auth.js';
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
    await readBodyText(c, SMALL_BODY_BYTES); // no body expected; read it so an oversized one is still refused
    if (!(await accountExists(c.var.store, account))) throw new SessyncError('not_found', `account ${account} not found`);
    const token = await issueToken(c.var.store, account);
    return c.json({ account, token }, 201);
  });
  return r;
}
