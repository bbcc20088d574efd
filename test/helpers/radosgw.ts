// Starts (or reuses) the throwaway Ceph radosgw of scripts/radosgw.sh and hands out empty buckets on it.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { S3Store } from '../../worker/store/s3-store.js';
import { REPO_ROOT } from './cli.js';

export interface Radosgw {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A bucket the script created (tests make their own with freshBucket). */
  bucket: string;
  /** State directory: config, logs (log/*.log), pid files. */
  dir: string;
}

export const RADOSGW_SCRIPT = join(REPO_ROOT, 'scripts/radosgw.sh');
export const RADOSGW_INSTALL_HINT = 'apt-get install -y ceph-mon ceph-osd radosgw';

/** Whether the Ceph binaries the script needs are on PATH. */
export function radosgwInstalled(): boolean {
  const missing = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'monmaptool'].filter(
    (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status !== 0,
  );
  return missing.length === 0;
}

let running: Promise<Radosgw> | undefined;

/**
 * Runs `scripts/radosgw.sh start` once per process: it reuses a cluster already answering on the port
 * (RADOSGW_PORT, default 7480) and serialises concurrent starters with a lock, so parallel test files
 * share one cluster. The cluster keeps running afterwards for the next run; `scripts/radosgw.sh stop` ends it.
 */
export function startRadosgw(): Promise<Radosgw> {
  running ??= new Promise<Radosgw>((resolve, reject) => {
    execFile('bash', [RADOSGW_SCRIPT, 'start'], { timeout: 420_000, env: process.env }, (err, stdout, stderr) => {
      if (err) {
        running = undefined;
        reject(new Error(`scripts/radosgw.sh start failed (${err.message.split('\n')[0]}):\n${stderr}`));
        return;
      }
      const v = Object.fromEntries(stdout.split('\n').flatMap((l) => (/^RADOSGW_\w+=/.test(l) ? [l.split(/=(.*)/s).slice(0, 2)] : [])));
      if (!v.RADOSGW_ENDPOINT) {
        reject(new Error(`scripts/radosgw.sh start printed no endpoint:\n${stdout}\n${stderr}`));
        return;
      }
      resolve({
        endpoint: v.RADOSGW_ENDPOINT,
        accessKeyId: v.RADOSGW_ACCESS_KEY,
        secretAccessKey: v.RADOSGW_SECRET_KEY,
        bucket: v.RADOSGW_BUCKET,
        dir: v.RADOSGW_DIR,
      });
    });
  });
  return running;
}

export function radosgwClient(gw: Radosgw): S3Client {
  return new S3Client(
    S3Store.clientConfig({
      bucket: gw.bucket,
      endpoint: gw.endpoint,
      credentials: { accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey },
      forcePathStyle: true,
    }),
  );
}

/** A new empty bucket with an S3Store on it; cleanup empties and removes the bucket. */
export async function freshBucket(gw: Radosgw): Promise<{ store: S3Store; bucket: string; cleanup: () => Promise<void> }> {
  const client = radosgwClient(gw);
  const bucket = `sessync-test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const store = new S3Store({ client, bucket });
  const cleanup = async () => {
    // Delete what the first page shows until nothing is left (deleting while following a token skips keys).
    for (;;) {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) break;
      const out = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
      if (out.Errors?.length) throw new Error(`emptying ${bucket}: ${JSON.stringify(out.Errors.slice(0, 3))}`);
    }
    await client.send(new DeleteBucketCommand({ Bucket: bucket }));
    client.destroy();
  };
  return { store, bucket, cleanup };
}
