// Turns a user's <ref> into a session (id prefix: this project first, then every project; or a path) and an entry ref into an entry.
import { stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import type { SessionEntry } from '../../shared/entry.js';
import type { SessionTree } from '../../shared/tree.js';
import { idMatches, shortId } from '../format/short-id.js';
import { listSessions } from './session-index.js';
import type { SessionSummary } from './session-index.js';
import { readHeader } from './session-reader.js';

/** A ref naming a file (it has a slash or ends in .jsonl), read from its path and not looked up in the sessions folder. */
export function looksLikePath(ref: string): boolean {
  return ref.includes('/') || ref.includes('\\') || ref.endsWith('.jsonl');
}

async function byPath(ref: string, cwd: string): Promise<SessionSummary> {
  const path = resolvePath(cwd, ref);
  let st;
  try {
    st = await stat(path);
  } catch {
    throw new SessyncError('not_found', `no session file at ${path}`);
  }
  if (!st.isFile()) throw new SessyncError('bad_input', `${path} is not a file`);
  const h = await readHeader(path);
  if (!h.ok) throw new SessyncError('corrupt', `${path} is not a session file: ${h.reason}`);
  return { id: h.header.id, path, cwd: h.header.cwd, timestamp: h.header.timestamp, lastEntryAt: h.header.timestamp, mtimeMs: st.mtimeMs, size: st.size };
}

function ambiguous(kind: string, ref: string, lines: string[], details: unknown): SessyncError {
  const shown = lines.slice(0, 20);
  const more = lines.length > shown.length ? [`  ... and ${lines.length - shown.length} more`] : [];
  return new SessyncError('ambiguous', [`${kind} "${ref}" is ambiguous; it matches ${lines.length}:`, ...shown, ...more, 'Give more characters.'].join('\n'), {
    details: { candidates: details },
  });
}

/** A session by id prefix (full or short form; this project first, then all) or by path. */
export async function resolveSession(ref: string, opts: { root: string; realCwd: string; cwd?: string; also?: string[]; flat?: boolean; env?: NodeJS.ProcessEnv }): Promise<SessionSummary> {
  if (ref.trim() === '') throw new SessyncError('bad_input', 'a session reference (an id, its short form or a prefix of either, or a path) is required');
  if (looksLikePath(ref)) return byPath(ref, opts.cwd ?? opts.realCwd);
  const pick = (rows: SessionSummary[]) => rows.filter((r) => idMatches(r.id, ref));
  const also = { ...(opts.also ? { also: opts.also } : {}), ...(opts.flat ? { flat: true } : {}), ...(opts.env ? { env: opts.env } : {}) };
  let found = pick(await listSessions({ root: opts.root, realCwd: opts.realCwd, ...also }));
  if (found.length === 0) found = pick(await listSessions({ root: opts.root, all: true, ...also }));
  // One session id may sit in two files (a copy): the same session, but still not one file to pick.
  if (found.length === 1) return found[0]!;
  if (found.length === 0) {
    throw new SessyncError('not_found', `no session matches "${ref}" in ${opts.root} (this project or any other). Run \`sessync list --all\`.`);
  }
  throw ambiguous(
    'session',
    ref,
    found.map((r) => `  ${shortId(r.id)}  ${r.id}  ${r.cwd}  ${r.path}`),
    found.map((r) => ({ id: r.id, path: r.path, cwd: r.cwd })),
  );
}

/** An entry of a session by id prefix (full or short form). */
export function resolveEntry(tree: SessionTree, ref: string, what = 'entry'): SessionEntry {
  if (ref.trim() === '') throw new SessyncError('bad_input', `an ${what} id is required`);
  const exact = tree.get(ref);
  if (exact) return exact;
  const found = tree.entries.filter((e) => idMatches(e.id, ref));
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new SessyncError('not_found', `no ${what} "${ref}" in this session. Run \`sessync log\` or \`sessync tree\` to see the ids.`);
  throw ambiguous(
    what,
    ref,
    found.map((e) => `  ${shortId(e.id)}  ${e.id}  ${e.type}  ${e.timestamp}`),
    found.map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp })),
  );
}
