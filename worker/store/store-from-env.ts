// Picks the Node entry's BlobStore (S3 or file system) from environment variables and checks it answers.
import { promises as fs, constants as fsc } from 'node:fs';
import { resolve } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import type { BlobStore } from './blob-store.js';
import { FsStore } from './fs-store.js';
import { S3Store, type S3StoreOptions } from './s3-store.js';

/**
 * Environment variables (all optional unless said otherwise):
 *
 * - `SESSYNC_STORE`: `fs` or `s3`. Default: `s3` when `SESSYNC_S3_BUCKET` is set, else `fs`.
 * - `SESSYNC_DATA_DIR` (fs): directory that holds the objects, created when missing. Default `./sessync-data`.
 * - `SESSYNC_S3_BUCKET` (s3, required): bucket name; the bucket must exist.
 * - `SESSYNC_S3_ENDPOINT` (s3): e.g. `http://127.0.0.1:7480` (Ceph radosgw), `http://minio:9000`,
 *   `https://<account>.r2.cloudflarestorage.com`. Unset means AWS.
 * - `SESSYNC_S3_REGION` (s3): default `us-east-1` (`auto` for R2).
 * - `SESSYNC_S3_ACCESS_KEY_ID`, `SESSYNC_S3_SECRET_ACCESS_KEY` (s3): both or neither. Neither means the
 *   AWS SDK's usual chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws profiles, instance roles).
 * - `SESSYNC_S3_FORCE_PATH_STYLE` (s3): `true`/`false`. Default `true` when an endpoint is set (self-hosted
 *   stores rarely have per-bucket host names), `false` for AWS.
 *
 * Example (Ceph radosgw or MinIO):
 *   SESSYNC_S3_ENDPOINT=http://127.0.0.1:7480 SESSYNC_S3_BUCKET=sessync \
 *   SESSYNC_S3_ACCESS_KEY_ID=... SESSYNC_S3_SECRET_ACCESS_KEY=... node dist/server.mjs
 *
 * Throws SessyncError('bad_input') for a wrong setting and SessyncError('unavailable') when the chosen
 * store does not answer (unreachable endpoint, missing bucket, bad keys, unwritable directory), so a
 * misconfigured server fails at start-up rather than on the first push.
 */
export async function createStoreFromEnv(env: Record<string, string | undefined>, opts: { check?: boolean } = {}): Promise<BlobStore> {
  const get = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const kind = get('SESSYNC_STORE') ?? (get('SESSYNC_S3_BUCKET') ? 's3' : 'fs');
  const check = opts.check ?? true;

  if (kind === 'fs') {
    const root = resolve(get('SESSYNC_DATA_DIR') ?? 'sessync-data');
    if (check) {
      try {
        await fs.mkdir(root, { recursive: true, mode: 0o700 }); // FsStore narrows an existing root on open
        await fs.access(root, fsc.W_OK);
      } catch (e) {
        throw new SessyncError('unavailable', `SESSYNC_DATA_DIR ${root} cannot be used: ${(e as Error).message}`, { retryable: false, cause: e });
      }
    }
    const store = new FsStore(root);
    if (check) await store.open(); // leftovers of a crashed run are cleaned now, not on the first write
    return store;
  }

  if (kind !== 's3') throw new SessyncError('bad_input', `SESSYNC_STORE must be "fs" or "s3", not "${kind}"`);

  const bucket = get('SESSYNC_S3_BUCKET');
  if (!bucket) throw new SessyncError('bad_input', 'SESSYNC_STORE=s3 needs SESSYNC_S3_BUCKET (the bucket name)');
  const endpoint = get('SESSYNC_S3_ENDPOINT');
  if (endpoint && !/^https?:\/\/[^/]/.test(endpoint)) {
    throw new SessyncError('bad_input', `SESSYNC_S3_ENDPOINT must be an http(s) URL like http://127.0.0.1:7480, not "${endpoint}"`);
  }
  const accessKeyId = get('SESSYNC_S3_ACCESS_KEY_ID');
  const secretAccessKey = get('SESSYNC_S3_SECRET_ACCESS_KEY');
  if (!accessKeyId !== !secretAccessKey) {
    throw new SessyncError('bad_input', 'set both SESSYNC_S3_ACCESS_KEY_ID and SESSYNC_S3_SECRET_ACCESS_KEY, or neither (to use the AWS SDK credential chain)');
  }
  const s3: S3StoreOptions = {
    bucket,
    region: get('SESSYNC_S3_REGION') ?? 'us-east-1',
    forcePathStyle: parseBool('SESSYNC_S3_FORCE_PATH_STYLE', get('SESSYNC_S3_FORCE_PATH_STYLE')) ?? Boolean(endpoint),
    ...(endpoint ? { endpoint } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  };
  const store = new S3Store(s3);
  // One cheap request proves endpoint, credentials and bucket; S3Store's error already says which is wrong.
  if (check) await store.list({ limit: 1 });
  return store;
}

function parseBool(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new SessyncError('bad_input', `${name} must be true or false, not "${v}"`);
}
