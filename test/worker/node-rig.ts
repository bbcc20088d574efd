// A real Node server (HTTP) on a file-system store in a temp folder, with one account, for suites that need the wire.
import { startNodeServer, type RunningServer } from '../../worker/node-server.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, TestClient } from './routes-helpers.js';

export { storedKeys } from './routes-helpers.js';

export interface NodeRig {
  url: string;
  /** The store the server writes to (inspect it to prove what was or was not stored). */
  fs: FsStore;
  alice: TestClient;
  account: string;
  server: RunningServer;
  close(): Promise<void>;
}

export const http = { fetch: (req: Request) => fetch(req) };

/** `wrap` puts something between the server and its file store (a fault injector). */
export async function startNodeRig(wrap: (fs: FsStore) => BlobStore = (fs) => fs): Promise<NodeRig> {
  const dir = tempDir('sessync-node-rig-');
  const fs = new FsStore(dir.dir);
  const server = await startNodeServer({ store: wrap(fs), adminSecret: TEST_ADMIN_SECRET, port: 0 });
  const created = await new TestClient(http, TEST_ADMIN_SECRET, server.url).call('POST', '/v1/admin/accounts', { name: 'rig' });
  if (created.status !== 201) throw new Error(`create account answered ${created.status}: ${created.text}`);
  const { account, token } = created.json as { account: string; token: string };
  return {
    url: server.url,
    fs,
    alice: new TestClient(http, token, server.url),
    account,
    server,
    close: async () => {
      await server.close();
      dir.cleanup();
    },
  };
}
