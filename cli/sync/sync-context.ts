// What push, pull and the sync run share: the API client, this machine's state and host id, progress callbacks.
import type { ApiClient } from '../api-client.js';
import type { Cursor, PullPage, PushBatchItem, PushBatchResponse } from '../../shared/wire.js';
import type { SyncState } from './sync-state.js';
import type { E2eKeys } from '../keys/sync-keys.js';

export interface SyncProgress {
  /** Entries and bytes moved since the last call. */
  entries?: number;
  bytes?: number;
}

/**
 * The sessions of a run are sessync's mirrors of another agent's files (cli/agents/): `agent` names it, `fileOf` maps a
 * mirror to the agent's own file of its session. What the engine says of a session names that file, and it removes no
 * such session (`--apply-deletes` included): the agent's file would stay, and only be mirrored again.
 */
export interface Mirrors {
  agent: string;
  fileOf(session: string, mirror: string): string;
}

export interface SyncContext {
  api: ApiClient;
  state: SyncState;
  hostId: string;
  /** Where sessions pulled for the first time go (sessions root). */
  sessionsRoot: string;
  /** sessionsRoot is pi's flat sessionDir: a pulled session's file goes directly in it, as pi writes there. */
  flat?: boolean;
  env: NodeJS.ProcessEnv;
  onProgress?: (p: SyncProgress) => void;
  /** Sends a push's batch; set while a run pushes many sessions, so their batches share requests (push-batcher.ts). */
  pushBatch?: (req: PushBatchItem) => Promise<PushBatchResponse>;
  /** A turn to read a push's next batch (its release given back); set while a run pushes many sessions (push.ts). */
  readTurn?: () => Promise<() => void>;
  /** Asks for a pull page; set while a run pulls many sessions, so their pages share requests (pull-batcher.ts). */
  pull?: (session: string, cursor: Cursor, o?: { withMeta?: boolean }) => Promise<PullPage>;
  /**
   * The account's end-to-end keys, asked of the server on first use (null: a plaintext account). Throws when the
   * account is encrypted and this machine's key is missing or wrong, before anything is written or sent.
   */
  e2e?: () => Promise<E2eKeys | null>;
  /** Set when the sessions are mirrors of another agent's files. */
  mirrors?: Mirrors;
  /** Notes for the user (skipped lines, migrations, conflicts): never dropped silently. */
  note?: (text: string) => void;
}
