// Parses `sessync serve --store`: `s3://BUCKET[/PREFIX]` (with --endpoint and the AWS variables) or `fs:DIR`.
import { resolve } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import type { StoreConfig } from './open-store.js';
import { normalisePrefix, s3SettingsFromEnv } from './store-from-env.js';

const USAGE = '--store must be s3://BUCKET[/PREFIX] or fs:DIR';
/** Loose on purpose: AWS allows [a-z0-9.-], Ceph and MinIO can be configured to allow more. */
const BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{2,254}$/;

export interface StoreSpecOptions {
  /** --endpoint; only for s3:// */
  endpoint?: string;
  /** fs:DIR is relative to this. */
  cwd: string;
  env: Record<string, string | undefined>;
}

/** Throws SessyncError('bad_input') naming the flag for anything it cannot use; touches nothing. */
export function parseStoreSpec(spec: string, opts: StoreSpecOptions): StoreConfig {
  const s3 = /^s3:\/\/([^/]*)(?:\/(.*))?$/s.exec(spec);
  if (s3) {
    const bucket = s3[1]!;
    if (!BUCKET.test(bucket)) throw new SessyncError('bad_input', `${USAGE}: "${bucket}" is not a bucket name (3 or more letters, digits, ".", "-", "_")`);
    return { kind: 's3', bucket, prefix: normalisePrefix(s3[2] ?? '', '--store'), ...s3SettingsFromEnv(opts.env, opts.endpoint === undefined ? {} : { endpoint: opts.endpoint }) };
  }
  if (opts.endpoint !== undefined) throw new SessyncError('bad_input', `--endpoint is only for --store s3://..., not "${spec}"`);
  if (spec.startsWith('fs:')) {
    const dir = spec.slice(3);
    if (dir === '') throw new SessyncError('bad_input', `${USAGE}: fs: needs a folder, e.g. fs:./sessync-data`);
    return { kind: 'fs', dir: resolve(opts.cwd, dir), source: '--store' };
  }
  throw new SessyncError('bad_input', `${USAGE}, not "${spec}"`);
}
