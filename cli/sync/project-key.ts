// Project identity across machines: the normalised git remote, else the repository's root commit, else the path.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { nullRecord } from '../../shared/own-keys.js';

/**
 * `git@github.com:Owner/Repo.git`, `https://user@GitHub.com/Owner/Repo`, `ssh://git@github.com:22/Owner/Repo.git/`
 * all become `github.com/Owner/Repo`: protocol, user, port, `.git` and trailing slashes dropped, host lowercased
 * (hosts are case-insensitive; paths may not be, so they keep their case).
 */
export function normaliseRemote(url: string): string {
  let u = url.trim();
  let host: string;
  let path: string;
  const proto = /^[a-z][a-z0-9+.-]*:\/\/(.*)$/i.exec(u);
  if (proto) {
    u = proto[1]!;
    const slash = u.indexOf('/');
    host = slash < 0 ? u : u.slice(0, slash);
    path = slash < 0 ? '' : u.slice(slash + 1);
    host = host.replace(/^[^@]*@/, '').replace(/:\d*$/, '');
  } else {
    const scp = /^(?:[^@/]+@)?([^:/]+):(.*)$/.exec(u); // scp-like: user@host:path
    if (!scp) return u.replace(/\/+$/, '').replace(/\.git$/, ''); // a local path remote: keep it as it is
    host = scp[1]!;
    path = scp[2]!;
  }
  path = path.replace(/\/+$/, '').replace(/\.git$/, '').replace(/^\/+/, '');
  return `${host.toLowerCase()}/${path}`;
}

function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', ['-C', cwd, ...args], { timeout: 5_000, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }, (err, stdout) => {
      // git missing, not a repository, no remote, no commit: each just means "try the next kind of key".
      resolve(err ? null : stdout.trim() || null);
    });
  });
}

/** A project key and how it was found: what `sessync project` shows. */
export interface ProjectKeyInfo {
  key: string;
  source: 'git-remote' | 'git-root' | 'path';
  /** The remote URL, the root commit, or why the path was used. */
  detail: string;
}

const cache = new Map<string, Promise<ProjectKeyInfo>>();

/** The project key of a folder, with how it was found; folders that do not exist here get the path key. Cached per process. */
export function describeProjectKey(dir: string): Promise<ProjectKeyInfo> {
  let p = cache.get(dir);
  if (!p) cache.set(dir, (p = computeKey(dir)));
  return p;
}

/** The project key of a folder (see describeProjectKey). */
export async function projectKey(dir: string): Promise<string> {
  return (await describeProjectKey(dir)).key;
}

/**
 * A session's project key: its cwd's, else (the cwd is no folder of this machine) the repository URL the agent recorded
 * in the session (Codex's session_meta.git), carried in the header as `gitUrl`.
 */
export async function sessionProjectKey(header: { cwd: string; gitUrl?: unknown }): Promise<string> {
  const info = await describeProjectKey(header.cwd);
  if (info.source === 'path' && typeof header.gitUrl === 'string' && header.gitUrl.trim() !== '') return normaliseRemote(header.gitUrl);
  return info.key;
}

async function computeKey(dir: string): Promise<ProjectKeyInfo> {
  const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!isDir) return { key: `path:${dir}`, source: 'path', detail: 'the folder does not exist on this machine' };
  const remote = await git(dir, ['config', '--get', 'remote.origin.url']);
  if (remote) return { key: normaliseRemote(remote), source: 'git-remote', detail: `git remote "origin" is ${remote}` };
  const roots = await git(dir, ['rev-list', '--max-parents=0', 'HEAD']);
  if (roots) {
    const root = roots.split('\n').sort()[0]!;
    return { key: `git-root:${root}`, source: 'git-root', detail: `git repository without an "origin" remote; its first commit is ${root}` };
  }
  return { key: `path:${dir}`, source: 'path', detail: 'not in a git repository with a commit, so the key is the folder path, which differs between machines: use --map on the other machine' };
}

/**
 * A folder's path below the top of its git repository (`pkg/web`), or null at the top or outside a repository: recorded
 * in a session header made here (`cwdInProject`), so the machine that pulls the session puts it in the same subfolder.
 */
export async function pathInProject(dir: string): Promise<string | null> {
  const prefix = (await git(dir, ['rev-parse', '--show-prefix']))?.replace(/\/+$/, '') ?? '';
  return prefix === '' ? null : prefix;
}

/**
 * Where a session made `sub` below its project's top (a header's `cwdInProject`) goes when it is filed under the local
 * project at `placed`: that subfolder of placed's repository top (of placed itself outside a repository) when it is a
 * folder here, else placed as it is. The header comes from the server or a share, so only a plain relative path of
 * `/`-separated names is followed: no backslash, drive letter or UNC form (another system's path), no `.`, `..` or
 * empty part, no `.git` part (a session filed in .git/hooks), and the joined path must stay inside the top.
 */
export async function placeInProject(placed: string, sub: unknown): Promise<string> {
  if (!plainSubfolder(sub)) return placed;
  const top = (await git(placed, ['rev-parse', '--show-toplevel'])) ?? placed;
  const there = join(top, sub);
  const rel = relative(top, there);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return placed;
  return (await stat(there).then((s) => s.isDirectory(), () => false)) ? there : placed;
}

function plainSubfolder(sub: unknown): sub is string {
  if (typeof sub !== 'string' || sub === '' || sub.includes('\\') || sub.startsWith('/') || /^[a-z]:/i.test(sub)) return false;
  // .git in any case: a case-insensitive file system (macOS, Windows) opens .GIT as .git.
  return sub.split('/').every((p) => p !== '' && p !== '.' && p !== '..' && p.toLowerCase() !== '.git');
}

/** Parses `--map KEY=PATH` values. */
export function parseMaps(values: readonly string[]): Record<string, string> {
  const out = nullRecord<string>(); // project keys are user input: `__proto__=...` is a key like any other
  for (const v of values) {
    const i = v.lastIndexOf('=');
    if (i <= 0 || i === v.length - 1) throw new SessyncError('bad_input', `--map expects KEY=PATH (e.g. github.com/owner/repo=/home/me/src/repo), got "${v}"`);
    out[v.slice(0, i)] = v.slice(i + 1);
  }
  return out;
}
