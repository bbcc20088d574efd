// `serve --store` specs and the S3 settings from the usual AWS variables: what is accepted, and the clear refusals.
import { describe, expect, it } from 'vitest';
import { isSessyncError } from '../../shared/errors.js';
import { describeStore } from '../../worker/store/open-store.js';
import { parseStoreSpec } from '../../worker/store/store-spec.js';
import { storeConfigFromEnv } from '../../worker/store/store-from-env.js';

const base = { cwd: '/srv/app', env: {} };

function refusal(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    expect(isSessyncError(e, 'bad_input'), String(e)).toBe(true);
    return e as Error;
  }
  throw new Error('accepted');
}

describe('parseStoreSpec', () => {
  it('s3://bucket/prefix takes the prefix as a folder, path style with an endpoint, region and keys from AWS_*', () => {
    const env = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'SECRET', AWS_SESSION_TOKEN: 'TOK', AWS_REGION: 'eu-west-3' };
    const c = parseStoreSpec('s3://my-bucket/team/sessync', { ...base, env, endpoint: 'http://127.0.0.1:7480' });
    expect(c).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'team/sessync/',
      endpoint: 'http://127.0.0.1:7480',
      region: 'eu-west-3',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'TOK' },
    });
    expect(describeStore(c)).toBe('s3://my-bucket/team/sessync/ at http://127.0.0.1:7480');
    expect(parseStoreSpec('s3://bkt/p/', base)).toMatchObject({ prefix: 'p/', region: 'us-east-1', forcePathStyle: false });
    expect(parseStoreSpec('s3://bkt', base)).toMatchObject({ prefix: '' });
    expect(parseStoreSpec('s3://bkt/', base)).not.toHaveProperty('credentials');
  });

  it('the endpoint comes from --endpoint, else AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL', () => {
    const env = { AWS_ENDPOINT_URL: 'http://general:1', AWS_ENDPOINT_URL_S3: 'http://s3only:2' };
    expect(parseStoreSpec('s3://bkt', { ...base, env })).toMatchObject({ endpoint: 'http://s3only:2' });
    expect(parseStoreSpec('s3://bkt', { ...base, env: { AWS_ENDPOINT_URL: 'http://general:1' } })).toMatchObject({ endpoint: 'http://general:1', forcePathStyle: true });
    expect(parseStoreSpec('s3://bkt', { ...base, env, endpoint: 'https://flag:3' })).toMatchObject({ endpoint: 'https://flag:3' });
  });

  it('fs:DIR is a folder relative to the cwd', () => {
    expect(parseStoreSpec('fs:data', base)).toEqual({ kind: 'fs', dir: '/srv/app/data', source: '--store' });
    expect(parseStoreSpec('fs:/var/lib/sessync', base)).toMatchObject({ dir: '/var/lib/sessync' });
  });

  it('refuses what it cannot use, naming the flag', () => {
    const cases: [string, Partial<Parameters<typeof parseStoreSpec>[1]>, string][] = [
      ['gs://bucket', {}, 's3://BUCKET'],
      ['./data', {}, 'fs:DIR'],
      ['s3://', {}, 'bucket name'],
      ['s3://ab/p', {}, 'bucket name'],
      ['s3://bkt/a//b', {}, 'prefix'],
      ['s3://bkt/a/../b', {}, 'prefix'],
      ['fs:', {}, 'fs: needs a folder'],
      ['fs:data', { endpoint: 'http://x:1' }, '--endpoint is only for'],
      ['s3://bkt', { endpoint: '127.0.0.1:7480' }, '--endpoint must be an http(s) URL'],
      ['s3://bkt', { env: { AWS_ENDPOINT_URL: 'minio:9000' } }, 'AWS_ENDPOINT_URL must be'],
      ['s3://bkt', { env: { AWS_ACCESS_KEY_ID: 'only-the-id' } }, 'AWS_SECRET_ACCESS_KEY'],
    ];
    for (const [spec, opts, words] of cases) {
      expect(refusal(() => parseStoreSpec(spec, { ...base, ...opts })).message, spec).toContain(words);
    }
  });
});

describe('storeConfigFromEnv (node dist/server.mjs)', () => {
  it('takes SESSYNC_S3_PREFIX and falls back to the AWS variables, SESSYNC_S3_* first', () => {
    const c = storeConfigFromEnv({
      SESSYNC_S3_BUCKET: 'b',
      SESSYNC_S3_PREFIX: '/prod/',
      AWS_REGION: 'auto',
      AWS_ENDPOINT_URL_S3: 'https://acct.r2.cloudflarestorage.com',
      AWS_ACCESS_KEY_ID: 'aws-id',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      SESSYNC_S3_ACCESS_KEY_ID: 'own-id',
      SESSYNC_S3_SECRET_ACCESS_KEY: 'own-secret',
    });
    expect(c).toMatchObject({
      kind: 's3',
      prefix: 'prod/',
      region: 'auto',
      endpoint: 'https://acct.r2.cloudflarestorage.com',
      credentials: { accessKeyId: 'own-id', secretAccessKey: 'own-secret' },
    });
    expect(refusal(() => storeConfigFromEnv({ SESSYNC_S3_BUCKET: 'b', SESSYNC_S3_PREFIX: 'a/../b' })).message).toContain('SESSYNC_S3_PREFIX');
  });
});
