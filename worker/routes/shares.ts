// Share routes: create, list, revoke, fetch ciphertext, and the static viewer page.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';

export const sharesRoutes = new Hono<AppEnv>();
