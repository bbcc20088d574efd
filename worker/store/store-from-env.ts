// Picks the Node entry's BlobStore (S3 or file system) from environment variables and checks it answers.
import { resolve } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import type { BlobStore } from './blob-store.js';
import { openStore, type S3Credentials, type StoreConfig } from './open-store.js';

type Env = Record<string, string | undefined>;

function getter(env: Env): (name: string) => string | undefined {
  return (name) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
}

/** `a/b` and `/a/b/` both become `a/b/`; '' stays ''. `what` names the setting in the error. */
export function normalisePrefix(raw: string, what: string): string {
  const p = raw.replace(/^\/+|\/+$/g, '');
  if (p === '') return '';
  if (/\/\/|\p{Cc}/u.test(p) || p.split('/').some((s) => s === '.' || s === '..')) {
    throw new SessyncError('bad_input', `${what}: the key prefix "${raw}" must be folder names separated by single "/" (no ".", "..", or control characters)`);
  }
  return p + '/';
}

export function checkEndpoint(endpoint: string, what: string): string {
  if (!/^https?:\/\/[^/]/.test(endpoint)) throw new SessyncError('bad_input', `${what} must be an http(s) URL like http://127.0.0.1:7480, not "${endpoint}"`);
  return endpoint;
}

/**
 * The S3 connection settings every way of starting the server shares. SESSYNC_S3_* win over the
 * usual AWS variables (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION, AWS_DEFAULT_REGION,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); `endpoint` (a flag) wins over both.
 * With no keys set the AWS SDK's own chain applies (AWS_PROFILE, ~/.aws, instance roles).
 */
export function s3SettingsFromEnv(env: Env, over: { endpoint?: string } = {}): Omit<Extract<StoreConfig, { kind: 's3' }>, 'kind' | 'bucket' | 'prefix'> {
  const get = getter(env);
  const endpoint =
    over.endpoint !== undefined ? checkEndpoint(over.endpoint, '--endpoint')
    : get('SESSYNC_S3_ENDPOINT') ? checkEndpoint(get('SESSYNC_S3_ENDPOINT')!, 'SESSYNC_S3_ENDPOINT')
    : get('AWS_ENDPOINT_URL_S3') ? checkEndpoint(get('AWS_ENDPOINT_URL_S3')!, 'AWS_ENDPOINT_URL_S3')
    : get('AWS_ENDPOINT_URL') ? checkEndpoint(get('AWS_ENDPOINT_URL')!, 'AWS_ENDPOINT_URL')
    : undefined;
  const aws = keyPair(get, 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY');
  const sessionToken = get('AWS_SESSION_TOKEN');
  const credentials = keyPair(get, 'SESSYNC_S3_ACCESS_KEY_ID', 'SESSYNC_S3_SECRET_ACCESS_KEY') ?? (aws && sessionToken ? { ...aws, sessionToken } : aws);
  return {
    region: get('SESSYNC_S3_REGION') ?? get('AWS_REGION') ?? get('AWS_DEFAULT_REGION') ?? 'us-east-1',
    // Self-hosted stores rarely have per-bucket host names, so an endpoint means path style unless told otherwise.
    forcePathStyle: parseBool('SESSYNC_S3_FORCE_PATH_STYLE', get('SESSYNC_S3_FORCE_PATH_STYLE')) ?? Boolean(endpoint),
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
  };
}

function keyPair(get: (n: string) => string | undefined, idName: string, secretName: string): S3Credentials | undefined {
  const accessKeyId = get(idName);
  const secretAccessKey = get(secretName);
  if (!accessKeyId !== !secretAccessKey) {
    throw new SessyncError('bad_input', `set both ${idName} and ${secretName}, or neither (to use the AWS SDK credential chain)`);
  }
  return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
}

/**
 * Environment variables of `node dist/server.mjs` (all optional unless said otherwise):
 *
 * - `SESSYNC_STORE`: `fs` or `s3`. Default: `s3` when `SESSYNC_S3_BUCKET` is set, else `fs`.
 * - `SESSYNC_DATA_DIR` (fs): directory that holds the objects, created when missing. Default `./sessync-data`.
 * - `SESSYNC_S3_BUCKET` (s3, required): bucket name; the bucket must exist.
 * - `SESSYNC_S3_PREFIX` (s3): keep every object under this folder of the bucket (e.g. `sessync/`).
 * - `SESSYNC_S3_ENDPOINT` (s3): e.g. `http://127.0.0.1:7480` (Ceph radosgw), `http://minio:9000`,
 *   `https://<account>.r2.cloudflarestorage.com`. Else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; unset means AWS.
 * - `SESSYNC_S3_REGION` (s3): else AWS_REGION or AWS_DEFAULT_REGION, else `us-east-1` (`auto` for R2).
 * - `SESSYNC_S3_ACCESS_KEY_ID`, `SESSYNC_S3_SECRET_ACCESS_KEY` (s3): both or neither. Neither means
 *   AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, else the AWS SDK's chain (~/.aws profiles, instance roles).
 * - `SESSYNC_S3_FORCE_PATH_STYLE` (s3): `true`/`false`. Default `true` when an endpoint is set, `false` for AWS.
 *
 * Throws SessyncError('bad_input') for a wrong setting.
 */
export function storeConfigFromEnv(env: Env): StoreConfig {
  const get = getter(env);
  const kind = get('SESSYNC_STORE') ?? (get('SESSYNC_S3_BUCKET') ? 's3' : 'fs');
  if (kind === 'fs') return { kind: 'fs', dir: resolve(get('SESSYNC_DATA_DIR') ?? 'sessync-data'), source: 'SESSYNC_DATA_DIR' };
  if (kind !== 's3') throw new SessyncError('bad_input', `SESSYNC_STORE must be "fs" or "s3", not "${kind}"`);
  const bucket = get('SESSYNC_S3_BUCKET');
  if (!bucket) throw new SessyncError('bad_input', 'SESSYNC_STORE=s3 needs SESSYNC_S3_BUCKET (the bucket name)');
  return { kind: 's3', bucket, prefix: normalisePrefix(get('SESSYNC_S3_PREFIX') ?? '', 'SESSYNC_S3_PREFIX'), ...s3SettingsFromEnv(env) };
}

/**
 * The store the environment names, checked (see openStore): SessyncError('bad_input') for a wrong
 * setting, SessyncError('unavailable') when the store does not answer (unreachable endpoint, missing
 * bucket, bad keys, unwritable directory).
 *
 * Example (Ceph radosgw or MinIO):
 *   SESSYNC_S3_ENDPOINT=http://127.0.0.1:7480 SESSYNC_S3_BUCKET=sessync \
 *   AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... node dist/server.mjs
 */
export async function createStoreFromEnv(env: Env, opts: { check?: boolean } = {}): Promise<BlobStore> {
  return openStore(storeConfigFromEnv(env), opts);
}

function parseBool(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new SessyncError('bad_input', `${name} must be true or false, not "${v}"`);
}
