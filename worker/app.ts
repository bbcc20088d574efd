// Builds the Hono app of the sync service; the store comes from the context, set by the runtime's entry.
import { Hono } from 'hono';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './app-env.js';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError, type ErrorCode } from '../shared/errors.js';
import { accountKeyRoutes } from './routes/account-key.js';
import { adminRoutes } from './routes/admin.js';
import { batchesRoutes } from './routes/batches.js';
import { multiBatchesRoutes } from './routes/multi-batches.js';
import { multiPullRoutes } from './routes/multi-pull.js';
import { changesRoutes } from './routes/changes.js';
import { healthRoutes } from './routes/health.js';
import { pullRoutes } from './routes/pull.js';
import { sealBatchRoutes } from './routes/seal-batch.js';
import { sealMetaRoutes } from './routes/seal-meta.js';
import { sessionKeyRoutes } from './routes/session-key.js';
import { sessionsRoutes } from './routes/sessions.js';
import { sharesRoutes } from './routes/shares.js';
import { tokensRoutes } from './routes/tokens.js';
import { RequestAbortedError } from './request-body.js';
import { adminSecretProblem } from './admin-secret.js';

export interface AppOptions {
  /** The store, or how to get it from the request (Workers: from env.BUCKET). Omit when a parent app sets c.var.store. */
  store?: BlobStore | ((c: Context<AppEnv>) => BlobStore);
  /** Admin secret; defaults to the SESSYNC_ADMIN_SECRET binding (Workers). */
  adminSecret?: string;
}

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'bad_input',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'gone',
  413: 'too_large',
};

/** What a client is told about a server fault: the details (object keys, backend errors) go only to the log. */
const PUBLIC_5XX: Partial<Record<ErrorCode, string>> = {
  unavailable: 'the server cannot reach its storage right now; retry later (the server log has details)',
};
const PUBLIC_INTERNAL = 'internal server error; the server log has details';

/**
 * The request path as it may be logged: a share link's token is a capability, so the segment after
 * `/s/` or `/v1/shares/` never reaches a log.
 */
export function loggablePath(path: string): string {
  return path.replace(/^(\/s|\/v1\/shares)\/(?!assets(?:\/|$))[^/]+/, '$1/<token>');
}

function errorResponse(c: Context, status: number, code: string, message: string, retryable: boolean, details?: unknown): Response {
  const error = details === undefined ? { code, message, retryable } : { code, message, retryable, details };
  return c.json({ error }, status as 400);
}

/** Throws bad_input when `opts.adminSecret` is too weak: a server with a guessable admin secret must not start. */
export function createApp(opts: AppOptions = {}): Hono<AppEnv> {
  if (opts.adminSecret !== undefined) {
    const problem = adminSecretProblem(opts.adminSecret);
    if (problem) throw new SessyncError('bad_input', problem);
  }
  const app = new Hono<AppEnv>();

  app.use('*', async (c, next) => {
    if (opts.store) c.set('store', typeof opts.store === 'function' ? opts.store(c) : opts.store);
    if (!c.var.store) throw new SessyncError('internal', 'server misconfigured: no storage backend was set up');
    await next();
  });

  app.route('/', healthRoutes);
  app.route('/', adminRoutes((c) => opts.adminSecret ?? c.env?.SESSYNC_ADMIN_SECRET));
  app.route('/', batchesRoutes);
  app.route('/', multiBatchesRoutes);
  app.route('/', pullRoutes);
  app.route('/', multiPullRoutes);
  app.route('/', changesRoutes);
  app.route('/', sessionsRoutes);
  app.route('/', sharesRoutes);
  app.route('/', tokensRoutes);
  app.route('/', accountKeyRoutes);
  app.route('/', sessionKeyRoutes);
  app.route('/', sealBatchRoutes);
  app.route('/', sealMetaRoutes);

  app.notFound((c) => errorResponse(c, 404, 'not_found', `no route ${c.req.method} ${new URL(c.req.url).pathname} on this sessync server (API under /v1)`, false));

  app.onError((err, c) => {
    const where = `${c.req.method} ${loggablePath(c.req.path)}`;
    if (err instanceof RequestAbortedError) {
      // Nobody reads this answer; one line, because a dropped connection is routine, not a fault.
      console.warn(`sessync: ${where}: aborted request (the client disconnected while sending its body)`);
      return errorResponse(c, err.status, err.code, err.message, false);
    }
    if (err instanceof SessyncError) {
      if (err.status >= 500) {
        console.error(`sessync: ${where}: ${err.message}`);
        return errorResponse(c, err.status, err.code, PUBLIC_5XX[err.code] ?? PUBLIC_INTERNAL, err.retryable);
      }
      return errorResponse(c, err.status, err.code, err.message, err.retryable, err.details);
    }
    if (err instanceof HTTPException) {
      const status = err.status;
      const code = CODE_OF_STATUS[status] ?? (status >= 500 ? 'internal' : 'bad_input');
      if (status >= 500) console.error(`sessync: ${where}: ${err.message}`);
      return errorResponse(c, status, code, status >= 500 ? PUBLIC_INTERNAL : err.message || `request refused (${status})`, status >= 500);
    }
    // c.req.json() in a route throws SyntaxError on a malformed body: that is bad input, not a server fault.
    if (err instanceof SyntaxError) return errorResponse(c, 400, 'bad_input', `the request body is not valid JSON (${err.message})`, false);
    console.error(`sessync: ${where}:`, err);
    return errorResponse(c, 500, 'internal', PUBLIC_INTERNAL, true);
  });

  return app;
}
