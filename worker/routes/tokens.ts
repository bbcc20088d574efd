// The account's own tokens, authenticated by any of them: list (never the secret), issue one, revoke one.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { SessyncError } from '../../shared/errors.js';
import { CreateTokenRequestSchema, type CreateOwnTokenResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';
import { parseJson, readBodyText, SMALL_BODY_BYTES } from '../request-body.js';
import { issueTokenRecord, listTokens, revokeToken } from '../tokens.js';

export const tokensRoutes = new Hono<AppEnv>();

tokensRoutes.get('/v1/tokens', requireAccount, async (c) => {
  c.header('Cache-Control', 'no-store');
  return c.json({ tokens: await listTokens(c.var.store, c.var.account, c.var.tokenId) });
});

tokensRoutes.post('/v1/tokens', requireAccount, async (c) => {
  const text = await readBodyText(c, SMALL_BODY_BYTES);
  // An empty body is fine: the name is optional.
  const input = text.trim() === '' ? {} : parseJson(text, CreateTokenRequestSchema, 'create token');
  const issued: CreateOwnTokenResponse = await issueTokenRecord(c.var.store, c.var.account, input.name);
  c.header('Cache-Control', 'no-store');
  return c.json(issued, 201);
});

/** `current` names the token making the request (`sessync logout --revoke`). Another account's id is a 404 like an unknown one. */
tokensRoutes.delete('/v1/tokens/:id', requireAccount, async (c) => {
  const raw = c.req.param('id');
  const id = raw === 'current' ? c.var.tokenId : raw;
  if (!(await revokeToken(c.var.store, c.var.account, id))) {
    throw new SessyncError('not_found', `no token of this account has id ${JSON.stringify(raw.slice(0, 80))}: \`sessync tokens\` lists them`);
  }
  return c.json({ revoked: true as const, id });
});
