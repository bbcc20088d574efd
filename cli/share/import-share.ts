// `sessync import`: fetch a share by its link, decrypt it with the key from the fragment, write a new local session.
import { join } from 'node:path';
import { ApiClient } from '../api-client.js';
import { CURRENT_VERSION, type SessionHeader } from '../../shared/entry.js';
import { newId } from '../../shared/ids.js';
import { decryptShare } from '../../shared/share-crypto.js';
import { decodeSharePayload, type SharePayload } from '../../shared/share-payload.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { createSessionFile } from '../store/session-writer.js';
import { withLocalParent } from '../store/lineage.js';
import { requireFullLink } from './share-url.js';

/** Prefix of an imported session's parentSession when the shared session is not on this machine: it names a share. */
export const SHARE_PARENT_PREFIX = 'sessync-share:';
/** Header fields a migrated v1 file keeps for its model: the import keeps them so its context has the same model. */
const CARRIED = ['provider', 'modelId', 'thinkingLevel', 'name'] as const;

export interface FetchedShare {
  payload: SharePayload;
  /** The share's id, when the server named it. */
  shareId: string | undefined;
  server: string;
}

export async function fetchShare(url: string, opts: { fetch?: typeof fetch } = {}): Promise<FetchedShare> {
  const link = requireFullLink(url);
  const api = new ApiClient({ url: link.server, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const blob = await api.shareBlob(link.token);
  const payload = decodeSharePayload(await decryptShare(blob.ciphertext, link.key));
  return { payload, shareId: blob.id, server: link.server };
}

export interface ImportedSession {
  id: string;
  path: string;
  header: SessionHeader;
  entryCount: number;
}

/** Writes the shared branch as a new session of `cwd`: same entry ids and content, a new session id. */
export async function writeImported(fetched: FetchedShare, root: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<ImportedSession> {
  const { payload, shareId } = fetched;
  const timestamp = new Date().toISOString();
  const header: SessionHeader = {
    type: 'session',
    version: CURRENT_VERSION,
    id: newId(),
    timestamp,
    cwd,
    parentSession: `${SHARE_PARENT_PREFIX}${shareId ?? 'unknown'}`,
    sharedFrom: {
      ...(shareId ? { share: shareId } : {}),
      server: fetched.server,
      session: payload.source.session,
      entryId: payload.source.entryId,
      sharedAt: payload.createdAt,
    },
  };
  for (const k of CARRIED) if (payload.header[k] !== undefined) header[k] = payload.header[k];
  // When the shared session is on this machine, parentSession is its file, so pi's picker shows the import under it.
  const placed = await withLocalParent(root, header, { env });
  const path = join(projectDir(root, cwd), sessionFileName(timestamp, header.id));
  await createSessionFile(path, placed, payload.entries, undefined, env);
  return { id: header.id, path, header: placed, entryCount: payload.entries.length };
}
