// S3 BlobStore through @aws-sdk/client-s3: AWS, R2's S3 API, Ceph radosgw, MinIO, any S3-compatible store.
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { SessyncError } from '../../shared/errors.js';
import { joinBody, type BlobBody, type BlobObject, type BlobStore, type ListOptions, type ListPage } from './blob-store.js';

const MAX_PAGE = 1000;
/** The AWS SDK's switch for its NodeVersionSupportWarning (@aws-sdk/core's emitWarningIfUnsupportedVersion). */
const VERSION_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
/** The one value the SDK compares the switch with (@aws-sdk/core 3.981: `=== "true"`). */
const SDK_SWITCH_ON = 'true';
/** What users write for "yes" in an environment variable (compared trimmed and lowercased). */
const TRUTHY: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'on']);
/** 409 ConditionalRequestConflict: another conditional write on the key is in flight; retry this many times. */
const CONFLICT_RETRIES = 10;

export interface S3StoreOptions {
  bucket: string;
  /** A ready client; when absent one is built from the fields below. */
  client?: S3Client;
  /** e.g. http://127.0.0.1:7480 for a local Ceph radosgw, https://<account>.r2.cloudflarestorage.com for R2. */
  endpoint?: string;
  /** Default us-east-1 (R2 wants 'auto'; Ceph and MinIO accept anything). */
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Bucket in the path, not the host name: needed by most self-hosted stores. */
  forcePathStyle?: boolean;
}

interface AwsError {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
}

function statusOf(e: unknown): number | undefined {
  return (e as AwsError | null)?.$metadata?.httpStatusCode;
}

function nameOf(e: unknown): string {
  const a = e as AwsError | null;
  return a?.name ?? a?.Code ?? a?.code ?? '';
}

/** Conditional writes raced by another one (S3 answers 409 ConditionalRequestConflict); safe to retry. */
function isConflict(e: unknown): boolean {
  return statusOf(e) === 409 && ['ConditionalRequestConflict', 'OperationAborted'].includes(nameOf(e));
}

function isNotFound(e: unknown): boolean {
  return nameOf(e) === 'NoSuchKey' || (statusOf(e) === 404 && nameOf(e) !== 'NoSuchBucket');
}

/** Every failure that is not a not-found or a lost race becomes SessyncError('unavailable'). */
function unavailable(op: string, bucket: string, key: string, e: unknown): SessyncError {
  if (e instanceof SessyncError) return e;
  const status = statusOf(e);
  const name = nameOf(e);
  // No status: the request never got an answer (connection refused, reset, DNS, timeout).
  const retryable = status === undefined || status >= 500 || status === 429 || status === 408 || isConflict(e);
  const hint =
    name === 'NoSuchBucket' ? ` (bucket "${bucket}" does not exist: create it or fix SESSYNC_S3_BUCKET)`
    : status === 403 || name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch' ? ' (check the access key, secret and region)'
    : status === undefined ? ' (is the S3 endpoint reachable?)'
    : '';
  const what = `${name || 'error'}${status ? ` HTTP ${status}` : ''}: ${(e as AwsError | null)?.message ?? String(e)}`;
  return new SessyncError('unavailable', `S3 ${op} ${bucket}/${key} failed: ${what}${hint}`, { retryable, cause: e });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Put-if-absent is PutObject with `If-None-Match: *`: 412 PreconditionFailed means the key
 * exists. ETags are returned without their quotes: radosgw (Ceph 16) refuses `If-Match` with
 * the quoted form the SDK hands back but accepts the bare hex, and AWS accepts both.
 */
export class S3Store implements BlobStore {
  readonly client: S3Client;
  readonly bucket: string;

  constructor(opts: S3StoreOptions) {
    this.bucket = opts.bucket;
    this.client = opts.client ?? S3Store.newClient(S3Store.clientConfig(opts));
  }

  /**
   * An S3Client, built without the SDK's NodeVersionSupportWarning. On Node below 22 the SDK warns that its releases
   * after January 2027 will need Node 22: the SDK installed with sessync runs on Node 20, which sessync supports, so
   * the warning leaves a user nothing to do and breaks stderr's one JSON document per line under --json. The SDK's
   * own switch for exactly that warning is read while a client is built (and the first answer kept), so it is set only
   * around this construction: no other warning is touched and no child process inherits it. The SDK honours only the
   * exact value "true": a user's own truthy value (1, yes, on, TRUE) is taken as meant, as "true" while the client is
   * built and the user's value back after; any other value the user set (false, 0) is left to the SDK.
   */
  static newClient(config: S3ClientConfig): S3Client {
    const users = process.env[VERSION_WARNING_SWITCH];
    if (users === SDK_SWITCH_ON || (users !== undefined && !TRUTHY.has(users.trim().toLowerCase()))) return new S3Client(config);
    process.env[VERSION_WARNING_SWITCH] = SDK_SWITCH_ON;
    try {
      return new S3Client(config);
    } finally {
      if (users === undefined) delete process.env[VERSION_WARNING_SWITCH];
      else process.env[VERSION_WARNING_SWITCH] = users;
    }
  }

  static clientConfig(opts: S3StoreOptions): S3ClientConfig {
    return {
      region: opts.region ?? 'us-east-1',
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      forcePathStyle: opts.forcePathStyle ?? false,
      // The SDK's default CRC32 checksum headers/trailers are unknown to many S3-compatible servers;
      // send and check them only where the API requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
  }

  async get(key: string): Promise<BlobObject | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const body = out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
      return { key, body, etag: unquote(out.ETag) };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw unavailable('get', this.bucket, key, e);
    }
  }

  async putIfAbsent(key: string, body: BlobBody): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: joinBody(body), IfNoneMatch: '*' }));
        return true;
      } catch (e) {
        if (statusOf(e) === 412 || nameOf(e) === 'PreconditionFailed') return false;
        if (isConflict(e) && attempt < CONFLICT_RETRIES) {
          // The racing write decides the outcome; the retry then sees 412 (or wins if that write failed).
          await sleep(Math.min(1000, 20 * 2 ** attempt) * (0.5 + Math.random()));
          continue;
        }
        throw unavailable('put-if-absent', this.bucket, key, e);
      }
    }
  }

  async put(key: string, body: BlobBody): Promise<void> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: joinBody(body) }));
    } catch (e) {
      throw unavailable('put', this.bucket, key, e);
    }
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? MAX_PAGE), 1), MAX_PAGE);
    try {
      const out = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          MaxKeys: limit,
          ...(opts.prefix ? { Prefix: opts.prefix } : {}),
          // S3 ignores StartAfter once a ContinuationToken is given; the token already lies past it.
          ...(opts.cursor ? { ContinuationToken: opts.cursor } : opts.startAfter ? { StartAfter: opts.startAfter } : {}),
        }),
      );
      const keys = (out.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [o.Key]));
      return out.IsTruncated && out.NextContinuationToken ? { keys, cursor: out.NextContinuationToken } : { keys };
    } catch (e) {
      throw unavailable('list', this.bucket, opts.prefix ?? '', e);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (e) {
      if (isNotFound(e)) return;
      throw unavailable('delete', this.bucket, key, e);
    }
  }
}

function unquote(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');
}
