// A session's parent as pi's session picker reads it: header `parentSession` is a file path, which pi resolves
// to nest a fork under its parent. sessync keeps the parent's id beside it (`parentSessionId`), which holds on
// every machine; the path is a local fact, set again where a pulled fork's parent is found here.
import type { SessionHeader } from '../../shared/entry.js';
import { listSessions, type ListOptions } from './session-index.js';
import { idFromFileName } from './paths.js';

/**
 * The id of the session a header descends from: sessync's fork and import name it; pi's own forks name only the
 * parent's file, whose name ends in `_<session id>.jsonl` on every machine.
 */
export function parentIdOf(header: SessionHeader): string | undefined {
  if (typeof header.parentSessionId === 'string') return header.parentSessionId;
  const from = header.sharedFrom as { session?: unknown } | undefined;
  if (typeof from?.session === 'string') return from.session;
  const p = header.parentSession;
  return typeof p === 'string' ? (idFromFileName(p.slice(Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\')) + 1)) ?? undefined) : undefined;
}

/** The local file of session `id` under `root` (and the folders read with it), if there is one. */
export async function localSessionPath(root: string, id: string, layout: Pick<ListOptions, 'also' | 'flat' | 'env'> = {}): Promise<string | undefined> {
  return (await listSessions({ root, all: true, ...layout })).find((s) => s.id === id)?.path;
}

/** The header with `parentSession` pointing at the parent's file on this machine, when that file is here. */
export async function withLocalParent(root: string, header: SessionHeader, layout: Pick<ListOptions, 'also' | 'flat' | 'env'> = {}): Promise<SessionHeader> {
  const parent = parentIdOf(header);
  if (parent === undefined) return header;
  const path = await localSessionPath(root, parent, layout);
  return path === undefined || path === header.parentSession ? header : { ...header, parentSession: path };
}
