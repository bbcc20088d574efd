// Share of a Codex rollout: its lines from the first up to one (a rollout is linear), each as an entry holding the line's
// value (so redaction reads every string) and its exact text (so an unredacted line lands byte for byte).
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative, resolve as resolvePath, sep } from 'node:path';
import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { codex } from '../../shared/agents/codex.js';
import type { AgentLine } from '../../shared/agents/agent.js';
import { codexSessionsRoot } from './codex-export.js';
import { idMatches } from '../format/short-id.js';
import { leftOutNotes, type ShareSource } from './claude-share.js';
import { pathInProject } from '../sync/project-key.js';

type Obj = Record<string, unknown>;

const ROLLOUT_RE = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** The session id a rollout's file name carries, or null when it is not a rollout's name. */
export function rolloutSession(name: string): string | null {
  const m = ROLLOUT_RE.exec(name);
  return m ? m[1]!.toLowerCase() : null;
}

/** Every rollout under the sessions folder (any depth: Codex finds one in any date folder), as absolute paths. */
async function rollouts(root: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(root, { recursive: true })) as string[];
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names.filter((n) => rolloutSession(basename(n)) !== null).map((n) => join(root, n));
}

/** The rollout `ref` names: a path to one, or a session id, its short form, or a prefix of either; null when no rollout matches. */
async function findRollout(env: NodeJS.ProcessEnv, ref: string, cwd: string): Promise<{ path: string; session: string } | null> {
  if (ref.endsWith('.jsonl') || ref.includes('/')) {
    const path = resolvePath(cwd, ref);
    const session = rolloutSession(basename(path));
    return session === null ? null : { path, session };
  }
  const root = codexSessionsRoot(env);
  // The same rule as every other ref: a prefix of the id or of the short form `list` shows (a v7 id's last 8).
  const hits = (await rollouts(root)).filter((p) => idMatches(rolloutSession(basename(p))!, ref));
  if (hits.length === 0) return null;
  if (hits.length > 1) {
    const list = hits.map((p) => `  ${relative(root, p)}`).join('\n');
    throw new SessyncError('ambiguous', `"${ref}" matches ${hits.length} Codex rollouts; give more of the session id:\n${list}`);
  }
  return { path: hits[0]!, session: rolloutSession(basename(hits[0]!))! };
}

/** The last line of the share: `at` is a line number of the rollout file, or a prefix of a line's id; default the last line. */
function upTo(lines: readonly AgentLine[], at: string | undefined): number {
  if (at === undefined) return lines.length;
  if (/^\d+$/.test(at)) {
    const n = Number(at);
    const i = lines.findIndex((l) => l.line === n);
    if (i < 0) throw new SessyncError('not_found', `--at ${at}: line ${n} of the rollout is not a usable line (it has ${lines.length ? lines[lines.length - 1]!.line : 0} lines)`);
    return i + 1;
  }
  const hits = lines.filter((l) => l.id.startsWith(at));
  if (hits.length !== 1) throw new SessyncError(hits.length ? 'ambiguous' : 'not_found', `--at ${at} matches ${hits.length} lines of the rollout (give a line number, or a longer id)`);
  return lines.indexOf(hits[0]!) + 1;
}

/** The Codex session `ref` as a share source (lines 1..`at`), or null when no Codex rollout matches it. */
export async function codexShareSource(env: NodeJS.ProcessEnv, ref: string, cwd: string, at: string | undefined): Promise<ShareSource | null> {
  const found = await findRollout(env, ref, cwd);
  if (!found) return null;
  let text: string;
  try {
    text = await readFile(found.path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const root = codexSessionsRoot(env);
  const rel = relative(root, found.path).split(sep).join('/');
  const parsed = codex.parseFile(text, { rel, kind: 'main' });
  const lines = parsed.lines;
  // Reported, never blocking: the share holds every line that can be read, in order.
  const notes = leftOutNotes(found.path, 'Codex', parsed);
  const picked = lines.slice(0, upTo(lines, at));
  const meta = lines.find((l) => l.value.type === 'session_meta');
  const mp = (meta?.value.payload ?? {}) as Obj;
  // The subfolder of its repository the session was started in: an import lands in that subfolder of the project there.
  const sub = typeof mp.cwd === 'string' && mp.cwd !== '' ? await pathInProject(mp.cwd) : null;
  const header: SessionHeader = {
    type: 'session',
    version: CURRENT_VERSION,
    id: found.session,
    timestamp: typeof mp.timestamp === 'string' ? mp.timestamp : typeof meta?.value.timestamp === 'string' ? meta.value.timestamp : '',
    cwd: typeof mp.cwd === 'string' ? mp.cwd : '',
    agent: 'codex',
    ...(sub !== null ? { cwdInProject: sub } : {}),
  };
  const branch: SessionEntry[] = picked.map((l, i) => ({
    type: 'agent_line',
    agent: 'codex',
    id: l.id,
    parentId: i > 0 ? picked[i - 1]!.id : null,
    timestamp: typeof l.value.timestamp === 'string' ? l.value.timestamp : '',
    file: '',
    value: l.value,
    line: l.text,
  }));
  return { header, branch, atId: picked.length ? picked[picked.length - 1]!.id : null, ...(notes.length ? { notes } : {}) };
}
