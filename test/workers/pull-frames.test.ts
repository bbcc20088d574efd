// Pulls as frames inside workerd: the real Workers entry on R2 (one session per POST /v1/pulls), the bucket read through the binding.
import { env, exports } from 'cloudflare:workers';
import { R2Store } from '../../worker/store/r2-store.js';
import type { Fetcher } from '../worker/routes-helpers.js';
import { describePullFrames } from '../worker/pull-frames.case.js';

const worker: Fetcher = { fetch: (req) => (exports as any).default.fetch(req) };

describePullFrames('R2 in workerd', async () => ({ fetcher: worker, store: new R2Store((env as unknown as { BUCKET: R2Bucket }).BUCKET), oneSessionPerPull: true }));
