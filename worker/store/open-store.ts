// Opens the BlobStore a StoreConfig names (file system, or S3 with an optional key prefix) and checks it answers.
import { promises as fs, constants as fsc } from 'node:fs';
import { SessyncError } from '../../shared/errors.js';
import type { BlobStore } from './blob-store.js';
import { FsStore } from './fs-store.js';
import { PrefixedStore } from './prefixed-store.js';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type StoreConfig =
  | { kind: 'fs'; dir: string; /** names the setting in error messages, e.g. `--store` or `SESSYNC_DATA_DIR` */ source: string }
  | {
      kind: 's3';
      bucket: string;
      /** '' or a folder ending with '/'. */
      prefix: string;
      /** Unset means AWS. */
      endpoint?: string;
      region: string;
      forcePathStyle: boolean;
      /** Unset: the AWS SDK's own chain (profiles, instance roles, ...). */
      credentials?: S3Credentials;
    };

/** How the store is shown to the user: `fs:/var/lib/sessync` or `s3://bucket/prefix/ at http://host:port`. */
export function describeStore(c: StoreConfig): string {
  if (c.kind === 'fs') return `fs:${c.dir}`;
  return `s3://${c.bucket}/${c.prefix}${c.endpoint ? ` at ${c.endpoint}` : ''}`;
}

/** What identifies the store's data, whatever the endpoint is called today: `fs:DIR` or `s3://bucket/prefix/`. */
export function storeName(c: StoreConfig): string {
  return c.kind === 'fs' ? `fs:${c.dir}` : `s3://${c.bucket}/${c.prefix}`;
}

/**
 * With `check` (the default) it proves the store usable before anything is written: the directory is
 * created and writable, or one cheap S3 list proves endpoint, credentials and bucket. Failures are
 * SessyncError('unavailable') naming what to fix, so a misconfigured server fails at start-up, not on
 * the first push.
 */
export async function openStore(c: StoreConfig, opts: { check?: boolean } = {}): Promise<BlobStore> {
  const check = opts.check ?? true;
  if (c.kind === 'fs') {
    if (check) {
      try {
        await fs.mkdir(c.dir, { recursive: true, mode: 0o700 }); // FsStore narrows an existing root on open
        await fs.access(c.dir, fsc.W_OK);
      } catch (e) {
        throw new SessyncError('unavailable', `${c.source} ${c.dir} cannot be used: ${(e as Error).message}`, { retryable: false, cause: e });
      }
    }
    const store = new FsStore(c.dir);
    if (check) await store.open(); // leftovers of a crashed run are cleaned now, not on the first write
    return store;
  }

  // Loaded only for S3: the SDK is most of a cold start, and `sessync serve` on files never needs it.
  const { S3Store } = await import('./s3-store.js');
  const config = S3Store.clientConfig({
    bucket: c.bucket,
    region: c.region,
    forcePathStyle: c.forcePathStyle,
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
  });
  const client = S3Store.newClient(c.credentials ? { ...config, credentials: c.credentials } : config);
  const s3 = new S3Store({ client, bucket: c.bucket });
  const store = c.prefix ? new PrefixedStore(s3, c.prefix) : s3;
  if (check) {
    try {
      await store.list({ limit: 1 });
    } catch (e) {
      // The SDK found no keys anywhere; S3Store's generic hint ("is the endpoint reachable?") would mislead.
      if ((e as { cause?: { name?: string } }).cause?.name === 'CredentialsProviderError') {
        throw new SessyncError('unavailable', 'no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)', { retryable: false, cause: e });
      }
      throw e;
    }
  }
  return store;
}
