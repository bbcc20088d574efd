// The local server behind `sessync serve` / `npm start`: the Node entry on the file-system store (or the one --store names), with first-start credentials.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SessyncError } from '../shared/errors.js';
import { adminSecretProblem } from './admin-secret.js';
import { accountExists, accountOfToken, createAccount, issueToken } from './auth.js';
import { startNodeServer } from './node-server.js';
import { FsStore, narrowToOwner } from './store/fs-store.js';
import { isStaleTemp, tempOwner } from './store/stale-temps.js';
import type { BlobStore } from './store/blob-store.js';

export interface LocalServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** Holds the blobs and credentials.json (created with mode 0700). */
  dataDir: string;
  host?: string;
  /** Where the objects live instead of dataDir/blobs (`serve --store`); credentials.json stays in dataDir. */
  store?: BlobStore;
  /** Names that store in credentials.json (e.g. `s3://bucket/prefix/`), so another store's credentials are never overwritten. */
  storeName?: string;
}

export interface LocalServer {
  url: string;
  /** The first account's token (from credentials.json). */
  token: string;
  account: string;
  /** Where the admin secret and first token are kept (mode 0600). */
  credentialsPath: string;
  /** True when this start created the credentials. */
  firstStart: boolean;
  close(): Promise<void>;
}

/** What credentials.json holds. */
interface Credentials {
  adminSecret: string;
  account: string;
  token: string;
  created: string;
  /** The store the account lives in; absent in files from before `--store` (then it is dataDir/blobs). */
  store?: string;
}

export const CREDENTIALS_FILE = 'credentials.json';
export const BLOBS_DIR = 'blobs';

async function readCredentials(path: string): Promise<Credentials | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SessyncError('unavailable', `cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const c = JSON.parse(text) as Credentials;
    if (typeof c.adminSecret === 'string' && typeof c.account === 'string' && typeof c.token === 'string') return c;
  } catch {
    // falls through to the error below, which names the file
  }
  throw new SessyncError('corrupt', `${path} is not a sessync credentials file: move it away and start again to create new credentials`);
}

const TMP_SUFFIX = '.tmp';

/** Writes the file with mode 0600 through a temp file, fsync and rename, so a crash never leaves half of it. */
async function writeCredentials(path: string, c: Credentials): Promise<void> {
  const tmp = `${path}.${tempOwner()}${TMP_SUFFIX}`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(JSON.stringify(c, null, 2) + '\n');
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

/** Loads the credentials, creating the admin secret and first account on the first start (or when the store lost them). */
async function ensureCredentials(store: BlobStore, path: string, storeName: string, defaultName: string): Promise<{ creds: Credentials; created: boolean }> {
  const existing = await readCredentials(path);
  if (existing && (await accountOfToken(store, existing.token)) === existing.account) return { creds: existing, created: false };
  const of = existing ? (existing.store ?? defaultName) : storeName;
  if (of !== storeName) {
    throw new SessyncError('bad_input', `${path} holds the credentials of ${of}, not ${storeName}: give this store a data folder of its own with --data DIR (credentials.json is left as it was)`);
  }
  const adminSecret = existing?.adminSecret ?? randomBytes(32).toString('base64url');
  // The saved token was revoked (`sessync tokens revoke`) but its account is there: a new token for that account,
  // not a new empty account that would hide the sessions.
  const { account, token } = existing && (await accountExists(store, existing.account))
    ? { account: existing.account, token: await issueToken(store, existing.account, 'sessync serve') }
    : await createAccount(store, 'local');
  const creds: Credentials = { adminSecret, account, token, created: new Date().toISOString(), store: storeName };
  await writeCredentials(path, creds);
  return { creds, created: true };
}

/**
 * The data folder, private to its owner whoever made it: created 0700, or narrowed to 0700 when it
 * exists (everything below is then out of others' reach, whatever older versions wrote there).
 */
async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await narrowToOwner(dir);
  } catch (e) {
    throw new SessyncError('unavailable', `cannot use ${dir} as the server's data folder: ${(e as Error).message}`, { retryable: false, cause: e });
  }
}

/** Temp files of a credentials write that a crash interrupted; another live server's write in progress is left alone. */
async function removeCredentialTemps(dir: string): Promise<void> {
  const prefix = `${CREDENTIALS_FILE}.`;
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(TMP_SUFFIX)) continue;
    if (isStaleTemp(name.slice(prefix.length), 0, Infinity)) await rm(join(dir, name), { force: true });
  }
}

export async function startLocalServer(opts: LocalServerOptions): Promise<LocalServer> {
  // An admin secret from the environment is checked before anything is created.
  const envSecret = process.env.SESSYNC_ADMIN_SECRET;
  const weak = envSecret ? adminSecretProblem(envSecret) : null;
  if (weak) throw new SessyncError('bad_input', weak);
  await ensurePrivateDir(opts.dataDir);
  await removeCredentialTemps(opts.dataDir);
  let store = opts.store;
  if (!store) {
    const fsStore = new FsStore(join(opts.dataDir, BLOBS_DIR));
    await fsStore.open();
    store = fsStore;
  }
  const credentialsPath = join(opts.dataDir, CREDENTIALS_FILE);
  const defaultName = `fs:${join(opts.dataDir, BLOBS_DIR)}`;
  const { creds, created } = await ensureCredentials(store, credentialsPath, opts.storeName ?? defaultName, defaultName);
  // credentials.json from an older version may be wider than 0600.
  await chmod(credentialsPath, 0o600);
  const adminSecret = envSecret || creds.adminSecret;
  const server = await startNodeServer({ store, adminSecret, port: opts.port, ...(opts.host ? { host: opts.host } : {}) });
  return { url: server.url, token: creds.token, account: creds.account, credentialsPath, firstStart: created, close: server.close };
}

