// Rig of the end-to-end encryption tests: encrypted machines, every stored object of a server (file store or S3), forged key files.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { CLI_BIN, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { freshBucket, radosgwClient, startRadosgw } from '../helpers/radosgw.js';
import { Machine, type TestServer } from '../sync/helpers.js';
import { exportAccountKey, newAccountKey } from '../../shared/sync-crypto.js';
import { keyPath } from '../../cli/keys/key-store.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { NESTED, placeKey, readLayoutMarker } from '../../worker/store/fs-layout.js';
import { storedKeys } from '../worker/routes-helpers.js';

export const REMOTE = 'git@github.com:Acme/Secret-App.git';

/**
 * The files of a session's stored batches on a Node server (file store), by host, each host's by seq: found through
 * the store's own listing and layout (which a test must not guess), so a test can read and rewrite them in place as a
 * hostile server would.
 */
export async function storedBatchFiles(server: TestServer, account: string, session: string): Promise<Map<string, string[]>> {
  const root = join(server.dataDir!, 'blobs');
  const layout = readLayoutMarker(root) ?? NESTED;
  const byHost = new Map<string, string[]>();
  for (const key of await storedKeys(new FsStore(root), `a/${account}/s/${session}/b/`)) {
    const host = key.split('/')[5]!; // a/<account>/s/<session>/b/<host>/<seq>, sorted by seq
    const { dirs, name } = placeKey(layout, key.split('/'));
    byHost.set(host, [...(byHost.get(host) ?? []), join(root, ...dirs, name)]);
  }
  return byHost;
}

/** The first machine logs in (the new account becomes encrypted; its export string comes back), the second imports it. */
export async function encryptedPair(root: string, server: TestServer, names: [string, string] = ['laptop', 'desktop'], env: Record<string, string> = {}): Promise<{ a: Machine; b: Machine; key: string; account: string }> {
  const a = new Machine(root, names[0], { remote: REMOTE, env });
  const b = new Machine(root, names[1], { remote: 'https://github.com/Acme/Secret-App', env });
  const login = await a.login(server, { encrypt: true });
  expect(login).toMatchObject({ encrypted: true, hasKey: true });
  expect(login.key).toMatch(/^sessync-key-1\./);
  await b.login(server, { encrypt: true });
  await b.ok(['key', 'import', '--json'], login.key);
  return { a, b, key: login.key as string, account: login.account as string };
}

/**
 * A session file of `from` copied to `to` (a copy of the sessions folder, never synced there), placed as `sessync`
 * places a pulled session: its folder and header name `to`'s checkout. Returns the copy's path.
 */
export function copySession(from: Machine, to: Machine, id: string): string {
  const src = from.fileOf(id);
  const enc = (p: string) => p.replace(/[/\\:]/g, '-');
  const dst = join(to.home, 'sessions', relative(join(from.home, 'sessions'), src).replace(enc(from.project), enc(to.project)));
  mkdirSync(dirname(dst), { recursive: true });
  writeFileSync(dst, readFileSync(src, 'utf8').replaceAll(JSON.stringify(from.project), JSON.stringify(to.project)));
  return dst;
}

/** A key file holding another key under the account's key id: what a machine with a wrong key has. */
export async function plantWrongKey(m: Machine, server: TestServer, account: string, keyId: string): Promise<void> {
  const { writeFileSync, mkdirSync } = await import('node:fs');
  const p = keyPath(m.env, server.url, account);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, JSON.stringify({ version: 1, url: server.url, account, key: await exportAccountKey({ ...newAccountKey(), keyId }) }), { mode: 0o600 });
}

/** Every object of a file store: its path under the data folder and its text. */
export function fsObjects(dataDir: string): { key: string; text: string }[] {
  const out: { key: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ key: p.slice(dataDir.length), text: readFileSync(p, 'latin1') });
    }
  };
  walk(dataDir);
  return out;
}

/** Names every object that contains one of the secrets (as UTF-8, or JSON-escaped as a server would store it). */
export function readable(objects: { key: string; text: string }[], secrets: string[]): string[] {
  const hits: string[] = [];
  for (const o of objects) for (const s of secrets) if (o.text.includes(s) || o.text.includes(JSON.stringify(s).slice(1, -1))) hits.push(`${o.key} holds ${JSON.stringify(s)}`);
  return hits;
}

export interface S3Server extends TestServer {
  cleanup(): void;
  objects(): Promise<{ key: string; text: string }[]>;
}

function cleanAwsEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (/^(AWS_|SESSYNC_S3_)/.test(k)) delete env[k];
  return { ...env, AWS_EC2_METADATA_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...extra };
}

/** `sessync serve --store s3://<fresh bucket>` on the shared radosgw; objects() lists and reads the whole bucket. */
export async function startS3Server(): Promise<S3Server> {
  const gw = await startRadosgw();
  const { bucket, cleanup } = await freshBucket(gw);
  const t = tempDir('sessync-e2e-s3-');
  const env = cleanAwsEnv({ SESSYNC_HOME: join(t.dir, 'server-home'), AWS_ACCESS_KEY_ID: gw.accessKeyId, AWS_SECRET_ACCESS_KEY: gw.secretAccessKey, AWS_REGION: 'us-east-1' });
  const child: ChildProcess = spawn(process.execPath, [CLI_BIN, 'serve', '--json', '--port', '0', '--store', `s3://${bucket}/e2e`, '--endpoint', gw.endpoint], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  const first = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (l) => {
      const v = JSON.parse(l) as { url: string; token: string };
      resolve({ url: v.url, token: v.token });
    });
    child.once('exit', (c) => reject(new Error(`sessync serve exited ${c}: ${err}`)));
  });
  const client = radosgwClient(gw);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
  };
  return {
    ...first,
    kind: 'node',
    stop,
    restart: () => Promise.reject(new Error('not supported')),
    cleanup: () => {
      void stop().then(cleanup).finally(() => {
        client.destroy();
        t.cleanup();
      });
    },
    async objects() {
      const out: { key: string; text: string }[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        for (const o of page.Contents ?? []) {
          const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
          out.push({ key: o.Key!, text: Buffer.from(await got.Body!.transformToByteArray()).toString('latin1') });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out;
    },
  };
}
