// Import of a shared Codex rollout: a new rollout of this machine (new session id, its own session_meta) that
// `codex resume <id>` opens, with the shared lines after it byte for byte as the share holds them (but a turn's cwd).
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { SessionEntry } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { toJsonText } from '../../shared/json-stringify.js';
import type { SharePayload } from '../../shared/share-payload.js';
import { codex } from '../../shared/agents/codex.js';
import { codexSessionsRoot, writeNewRollout } from './codex-export.js';
import { placeInProject } from '../sync/project-key.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a share holds a Codex rollout's lines. */
export function isCodexShare(payload: SharePayload): boolean {
  return payload.header.agent === 'codex';
}

/**
 * The exact text of a shared line: the line as Codex wrote it when it travelled along and says what the value says
 * (redaction left it alone), else the (redacted) value written out. Null when the entry is not a Codex line.
 */
export function codexLineText(e: SessionEntry): { text: string; value: Obj } | null {
  if (e.type !== 'agent_line' || e.agent !== 'codex') return null;
  let value: unknown = e.value;
  if (typeof e.line === 'string' && !e.line.includes('\n')) {
    try {
      const parsed: unknown = JSON.parse(e.line);
      if (isObj(parsed) && (value === undefined || toJsonText(parsed) === toJsonText(value))) return { text: e.line, value: parsed };
    } catch {
      // Not JSON: the value (when there is one) is the line, below; else the entry is refused.
    }
  }
  return isObj(value) ? { text: toJsonText(value), value } : null;
}

/**
 * Fields of the sharer's session_meta that do not hold here: their checkout (`git`), a session only they have
 * (`forked_from_id`), and their model provider: Codex refuses to resume a session under another provider than the
 * one it names, and the importer's provider is their own config's (without the field Codex takes the configured one).
 */
const DROPPED = new Set(['git', 'forked_from_id', 'model_provider']);

/**
 * The session_meta of the new rollout: the shared one's fields with this machine's id, start time and cwd first,
 * without the DROPPED ones.
 */
function newMeta(shared: Obj | undefined, id: string, now: string, cwd: string): string {
  const from = isObj(shared?.payload) ? (shared.payload as Obj) : { originator: 'codex_cli_rs', cli_version: '0.0.0', source: 'cli' };
  const p: Obj = { id, timestamp: now, cwd }; // the order Codex writes them in
  for (const [k, v] of Object.entries(from)) {
    if (k in p || DROPPED.has(k)) continue;
    // Newer Codex repeats the id as session_id and names the workspace: both must be this rollout's.
    p[k] = k === 'session_id' ? id : k === 'runtime_workspace_roots' && Array.isArray(v) ? [cwd] : v;
  }
  return JSON.stringify({ timestamp: now, type: 'session_meta', payload: p });
}

/**
 * A shared line as Codex would have written it in this project: a turn_context's `cwd` (the sharer's path, redacted to
 * `~/...`) is the importing project's, as the session_meta's is. Every other line is the share's text as it is.
 */
function asImported(l: { text: string; value: Obj }, cwd: string): string {
  if (l.value.type !== 'turn_context' || !isObj(l.value.payload) || typeof l.value.payload.cwd !== 'string') return l.text;
  return JSON.stringify({ ...l.value, payload: { ...l.value.payload, cwd } });
}

/**
 * Writes a shared Codex rollout as a new session of `project` in this machine's Codex sessions folder. A session shared
 * from a subfolder of its repository (the header's cwdInProject) gets that subfolder here as its cwd.
 */
export async function writeCodexImport(payload: SharePayload, env: NodeJS.ProcessEnv, project: string, now = new Date()): Promise<{ id: string; path: string; entryCount: number }> {
  const cwd = await placeInProject(project, payload.header.cwdInProject);
  const lines: { text: string; value: Obj }[] = [];
  for (const e of payload.entries) {
    const l = codexLineText(e);
    if (l === null) throw new SessyncError('corrupt', `the share's entry ${e.id} is not a line of a Codex rollout; nothing was written`);
    lines.push(l);
  }
  const id = uuidv7();
  const at = now.toISOString();
  const metaAt = lines.findIndex((l) => l.value.type === 'session_meta');
  // The rollout's first line is its session_meta (Codex reads the session from it); the shared one is replaced.
  const rest = lines.filter((_, i) => i !== metaAt).map((l) => asImported(l, cwd));
  const out = [newMeta(metaAt >= 0 ? lines[metaAt]!.value : undefined, id, at, cwd), ...rest];
  // Named and foldered by local start time, as Codex names its own rollouts.
  const path = join(codexSessionsRoot(env), codex.mainFile(id, at));
  await writeNewRollout(path, out);
  return { id, path, entryCount: out.length };
}
