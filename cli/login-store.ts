// Where `sessync login` keeps the server URL and token: $SESSYNC_HOME/login.json, readable by the user only.
import { readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SessyncError } from '../shared/errors.js';
import { writeFileAtomic } from './store/atomic-json.js';
import { mkdirPrivate } from './store/private-fs.js';

export interface Login {
  url: string;
  token: string;
  /** Account the token belongs to, as /v1/whoami answered at login. */
  account?: string;
  /** The token's id on the server (`sessync tokens` lists it), when login issued it for this machine. */
  tokenId?: string;
  /** The name it was issued under (the machine's name by default). */
  tokenName?: string;
}

/** Same rule as cli/store/paths.ts sessyncHome(): kept here so login works before any session exists. */
function home(env: NodeJS.ProcessEnv): string {
  return env.SESSYNC_HOME || join(homedir(), '.sessync');
}

export function loginPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(home(env), 'login.json');
}

export async function loadLogin(env: NodeJS.ProcessEnv = process.env): Promise<Login | null> {
  const p = loginPath(env);
  let text: string;
  try {
    text = await readFile(p, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SessyncError('internal', `cannot read ${p}: ${(e as Error).message}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new SessyncError('corrupt', `${p} is not valid JSON: run \`sessync login <url> --token <token>\` again`);
  }
  const o = v as Partial<Login> | null;
  if (!o || typeof o.url !== 'string' || typeof o.token !== 'string') {
    throw new SessyncError('corrupt', `${p} lacks url or token: run \`sessync login <url> --token <token>\` again`);
  }
  return {
    url: o.url,
    token: o.token,
    ...(typeof o.account === 'string' ? { account: o.account } : {}),
    ...(typeof o.tokenId === 'string' ? { tokenId: o.tokenId } : {}),
    ...(typeof o.tokenName === 'string' ? { tokenName: o.tokenName } : {}),
  };
}

/** Written 0600 through temp + fsync + rename, in a 0700 folder: the token is never readable by others. */
export async function saveLogin(login: Login, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const p = loginPath(env);
  await mkdirPrivate(home(env));
  await writeFileAtomic(p, JSON.stringify(login, null, 2) + '\n');
  return p;
}

/** Returns whether a login was there. */
export async function clearLogin(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const p = loginPath(env);
  try {
    await rm(p);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new SessyncError('internal', `cannot remove ${p}: ${(e as Error).message}`);
  }
}

/** The login or a clear error: every network command starts here. */
export async function requireLogin(env: NodeJS.ProcessEnv = process.env): Promise<Login> {
  const l = await loadLogin(env);
  if (!l) throw new SessyncError('unauthorized', 'not logged in: run `sessync login <url> --token <token>` first');
  return l;
}
