// Where this machine keeps an account's end-to-end key: $SESSYNC_HOME/keys/<server+account>.json, 0600, as its export string.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { importAccountKey, type AccountKey } from '../../shared/sync-crypto.js';
import { writeFileAtomic } from '../store/atomic-json.js';
import { sessyncHome } from '../store/paths.js';
import { serverKey } from '../sync/session-sync-state.js';

interface KeyFile {
  version: 1;
  url: string;
  account: string;
  /** The export string (checksummed): a damaged file is caught on read, never used as another key. */
  key: string;
  /** Keys this machine held before a rotation, newest first: what an interrupted `key rotate` resumes with. */
  previous?: string[];
}

export interface StoredKey {
  key: AccountKey;
  previous: AccountKey[];
  path: string;
}

/** One file per server and account, named like the sync state folder of that pair. */
export function keyPath(env: NodeJS.ProcessEnv, url: string, account: string): string {
  return join(sessyncHome(env), 'keys', `${serverKey(url, account)}.json`);
}

export async function loadKey(env: NodeJS.ProcessEnv, url: string, account: string): Promise<StoredKey | null> {
  const path = keyPath(env, url, account);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SessyncError('internal', `cannot read ${path}: ${(e as Error).message}`);
  }
  let f: KeyFile;
  try {
    f = JSON.parse(text) as KeyFile;
    if (typeof f.key !== 'string') throw new Error('no key');
    return { key: await importAccountKey(f.key), previous: await Promise.all((f.previous ?? []).map((p) => importAccountKey(p))), path };
  } catch (e) {
    throw new SessyncError('corrupt', `${path} is damaged (${(e as Error).message}); import the key again with \`sessync key import\``, { cause: e });
  }
}

/** Written 0600 through temp + fsync + rename: the file holds the old key or the new one, never half of either. */
export async function saveKey(env: NodeJS.ProcessEnv, url: string, account: string, key: string, previous: string[] = []): Promise<string> {
  const path = keyPath(env, url, account);
  const f: KeyFile = { version: 1, url, account, key, ...(previous.length ? { previous: previous.slice(0, 10) } : {}) };
  await writeFileAtomic(path, JSON.stringify(f, null, 2) + '\n');
  return path;
}
