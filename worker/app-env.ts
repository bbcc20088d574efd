// The Hono environment every route shares: bindings from the runtime, the store and the caller's account.
import type { BlobStore } from './store/blob-store.js';

export interface AppBindings {
  /** R2 bucket (Workers only). */
  BUCKET?: R2Bucket;
  /** Secret that authorises /v1/admin calls (a wrangler secret, or an env var on Node). */
  SESSYNC_ADMIN_SECRET?: string;
  /**
   * Batches one POST /v1/batches may carry (a wrangler var). Unset: WORKERS_MAX_BATCHES on Workers, whose plans
   * cap the storage calls of one request (each batch costs about six), else LIMITS.maxBatchesPerPush.
   */
  SESSYNC_MAX_BATCHES_PER_PUSH?: string;
}

export interface AppVariables {
  /** Set by the entry (Workers: R2 from env; Node: S3 or file system) before any route runs. */
  store: BlobStore;
  /** Set by the auth middleware once the bearer token checks out. */
  account: string;
  /** Id of the token the request came with (set with `account`). */
  tokenId: string;
}

export type AppEnv = { Bindings: AppBindings; Variables: AppVariables };
