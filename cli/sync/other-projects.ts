// Sessions on the server of projects other than this folder's: a pull that finds none of this project's says so and
// how to take them (--map, `sessync project`, --all), instead of a bare "0 sessions checked" that reads as a failure.
import type { Head } from '../../shared/wire.js';
import { remoteAgents } from './remote-keys.js';
import type { SyncContext } from './sync-context.js';
import { shellWord } from '../format/shell-word.js';

/** Keys listed in --json; the text names them all up to KEYS_ALL, else the first KEYS_NAMED. */
const KEYS_LISTED = 20;
const KEYS_ALL = 6;
const KEYS_NAMED = 3;

export interface OtherProjects {
  /** This folder's project key, and the folder. */
  projectKey: string;
  folder: string;
  /** Sessions on the server that are this project's (here too, or only there; any agent), before this run. */
  thisProject: number;
  /** Sessions on the server of other projects (this run's agent's), which this run left alone. */
  sessions: number;
  /**
   * Their project keys (20 at most), the likeliest to be this folder's project first: a key named like this folder
   * (its last path part, a git remote's repository name), then, for a folder without git, path: keys (a project
   * without git is the one a mapping is for: a git one is found by its remote), then most sessions first; the
   * project of most sessions is always listed.
   */
  keys: { key: string; sessions: number }[];
}

/**
 * What the server holds besides this project, from what the run already knows: the heads, and the project keys of
 * the sessions only the server has (remoteProjectKeys, so their metas are cached: no request is added). Counted for
 * `agent` only (none: every agent), so the runs of several agents add up without counting a session twice.
 */
export async function otherProjects(ctx: SyncContext, o: { heads: readonly Head[]; local: ReadonlySet<string>; keys: ReadonlyMap<string, string>; here: ReadonlySet<string>; projectKey: string; folder: string; agent?: string }): Promise<OtherProjects> {
  const onServer = new Set(o.heads.map((h) => h.session));
  let thisProject = 0;
  for (const s of onServer) if (o.local.has(s) || o.here.has(o.keys.get(s) ?? '')) thisProject++;
  let others = [...o.keys].filter(([s, k]) => onServer.has(s) && !o.local.has(s) && !o.here.has(k));
  if (o.agent !== undefined && others.length > 0) {
    const agentOf = await remoteAgents(ctx, others.map(([s]) => s), o.heads);
    others = others.filter(([s]) => (agentOf.get(s) ?? 'pi') === o.agent);
  }
  return { projectKey: o.projectKey, folder: o.folder, thisProject, sessions: others.length, keys: countKeys(o.folder, o.projectKey, others.map(([, k]) => k)) };
}

/** The last part of a path: key's path or of a git remote key (`host/owner/repo`); none for a root-commit key. */
function lastPart(s: string): string {
  if (s.startsWith('git-root:')) return '';
  return (s.startsWith('path:') ? s.slice('path:'.length) : s).replace(/[\\/]+$/, '').split(/[\\/]/).pop() ?? '';
}

/**
 * Lower first: 0 named like the folder, 1 a path: key when this folder's own key is one (a folder without git: the
 * project a mapping is for is likely another machine's path of it), 2 any other. A folder with a git remote ranks
 * path: keys as any other: its project is found by its remote, and a scratch folder's sessions are not it.
 */
function rank(key: string, folderName: string, pathFirst: boolean): number {
  if (folderName !== '' && lastPart(key) === folderName) return 0;
  return pathFirst && key.startsWith('path:') ? 1 : 2;
}

function countKeys(folder: string, projectKey: string, keys: Iterable<string>, add: Map<string, number> = new Map()): { key: string; sessions: number }[] {
  for (const k of keys) add.set(k, (add.get(k) ?? 0) + 1);
  const name = lastPart(folder);
  const pathFirst = projectKey.startsWith('path:');
  const all = [...add].map(([key, sessions]) => ({ key, sessions }));
  const sorted = all.sort((a, b) => rank(a.key, name, pathFirst) - rank(b.key, name, pathFirst) || b.sessions - a.sessions || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const listed = sorted.slice(0, KEYS_LISTED);
  // The project of most sessions is always among those listed, however many keys rank before it.
  const biggest = all.reduce<{ key: string; sessions: number } | undefined>((m, k) => (!m || k.sessions > m.sessions ? k : m), undefined);
  if (biggest && !listed.includes(biggest)) listed[listed.length - 1] = biggest;
  return listed;
}

/** The key the `--map` advice names: one named like the folder, else the project of most sessions. */
function adviceKey(x: OtherProjects): string {
  const name = lastPart(x.folder);
  const named = name === '' ? undefined : x.keys.find((k) => lastPart(k.key) === name);
  return (named ?? x.keys.reduce((m, k) => (k.sessions > m.sessions ? k : m), x.keys[0]!)).key;
}

/** Several agents' figures as one: their sessions add up (each counted its own), this project's is the same for all. */
export function mergeOtherProjects(all: readonly (OtherProjects | undefined)[]): OtherProjects | undefined {
  const xs = all.filter((x): x is OtherProjects => x !== undefined);
  if (xs.length === 0) return undefined;
  const add = new Map<string, number>();
  for (const x of xs) for (const k of x.keys) add.set(k.key, (add.get(k.key) ?? 0) + k.sessions);
  return { ...xs[0]!, thisProject: Math.max(...xs.map((x) => x.thisProject)), sessions: xs.reduce((n, x) => n + x.sessions, 0), keys: countKeys(xs[0]!.folder, xs[0]!.projectKey, [], add) };
}

/**
 * The note a pull or sync prints when the server has nothing of this project but has sessions of others (null
 * otherwise: a project that has sessions on the server has its sync working, and is not told of the others each run).
 */
export function otherProjectsNote(x: OtherProjects | undefined, mode: 'pull' | 'sync'): string | null {
  if (!x || x.sessions === 0 || x.thisProject > 0) return null;
  // Few: every key, so the one needed is never hidden behind "and 2 more"; many: the likeliest first (see keys).
  const shown = x.keys.length <= KEYS_ALL ? x.keys.length : KEYS_NAMED;
  const named = x.keys.slice(0, shown).map((k) => `${k.key} (${k.sessions})`);
  const rest = x.keys.length - shown;
  const more =
    rest > 0
      ? x.keys.length >= KEYS_LISTED
        ? `, and at least ${rest} more project(s) (\`sessync ${mode} --json\` lists the first ${KEYS_LISTED} under otherProjects)`
        : `, and ${rest} more project(s) (\`sessync ${mode} --json\` lists them under otherProjects)`
      : '';
  const first = adviceKey(x);
  return [
    `${mode}: the server has no session of this project (key ${x.projectKey}), and ${x.sessions} session(s) of other projects: ${named.join(', ')}${more}.`,
    `  To take a project's sessions into this folder: \`sessync ${mode} --map ${shellWord(`${first}=${x.folder}`)}\` (remembered for later runs).`,
    `  \`sessync project\` shows this folder's key and how it was found (without git it is the path, which differs between machines);`,
    `  \`sessync ${mode} --all\` takes every project's sessions, each into the folder it was made in.`,
  ].join('\n');
}
