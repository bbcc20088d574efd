// The answer of GET /v1/sessions/:session (and of the routes that change a meta): the stored meta and every host's head.
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';
import type { SessionMetaResponse } from '../shared/wire.js';
import { isSealedMeta, notFoundSession, readMeta, sessionHeads, type StoredMeta } from './session-data.js';
import { findTombstone, goneSession } from './session-delete.js';

export function metaResponse(session: string, meta: StoredMeta, heads: Map<string, number>): SessionMetaResponse {
  const hosts = Object.fromEntries([...heads].sort(([a], [b]) => (a < b ? -1 : 1)));
  // Sealed: the server can say nothing of the header, so `created` is the time of the first push (or of the plaintext
  // header's own timestamp, kept when the meta was sealed in place).
  if (isSealedMeta(meta)) return { session, sealed: meta.sealed, projectKey: meta.projectKey, created: meta.created, hosts };
  const header = meta.header;
  const res: SessionMetaResponse = {
    session,
    header,
    projectKey: meta.projectKey,
    // The session's own creation time (header timestamp); the time of the first push when the header has none.
    created: typeof header.timestamp === 'string' ? header.timestamp : meta.created,
    hosts,
  };
  if (typeof header.cwd === 'string') res.cwd = header.cwd;
  if (meta.name !== undefined) res.name = meta.name;
  return res;
}

/** The session's stored meta and heads; 410 for a deleted session, 404 for a missing one or one without meta yet. */
export async function loadSessionMeta(store: BlobStore, account: string, session: string): Promise<{ meta: StoredMeta; heads: Map<string, number> }> {
  const [meta, heads, tomb] = await Promise.all([readMeta(store, account, session), sessionHeads(store, account, session), findTombstone(store, account, session)]);
  if (tomb) throw goneSession(tomb);
  if (!meta && heads.size === 0) throw notFoundSession(session);
  if (!meta) {
    // Batches without meta: a first push that has not finished (the meta is written before the head) or a client
    // that never sent one. An empty header and projectKey would send a pull to no project; say what is missing.
    throw new SessyncError(
      'not_found',
      `session ${session} has batches but no metadata (header, project) on this server yet: its first push has not finished; push it again with its header, or sync later`,
    );
  }
  return { meta, heads };
}
