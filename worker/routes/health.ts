// GET /v1/health (no auth) tells a client it talks to a sessync server; GET /v1/whoami names the token's account.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { API_VERSION, SERVICE_NAME, type HealthResponse, type WhoamiResponse } from '../../shared/wire.js';
import { requireAccount } from '../auth.js';

export const healthRoutes = new Hono<AppEnv>();

healthRoutes.get('/v1/health', (c) => c.json({ service: SERVICE_NAME, api: API_VERSION } satisfies HealthResponse));

healthRoutes.get('/v1/whoami', requireAccount, (c) => c.json({ account: c.var.account } satisfies WhoamiResponse));
