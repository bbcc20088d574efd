// A real Node server (HTTP) on a file-system store in a temp folder, with one account, for suites that need the wire.
import { startNodeServer, type RunningServer } from '../../worker/node-server.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { tempDir } from '../helpers/cli.js';
import { request } from 'node:http';
import { TEST_ADMIN_SECRET, TestClient, type Fetcher } from './routes-helpers.js';

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

/**
 * Sends requests made for any base URL (such as http://sessync.test) to the server at `base`, over node:http, the body
 * written in pieces of about `pieceBytes` with a turn of the event loop between them, so the server gets it in many
 * chunks, cut anywhere (a line, a frame header, a body split across them), as from a slow network.
 */
export function wireFetcher(base: string, pieceBytes = 997): Fetcher {
  return {
    fetch: async (req) => {
      const u = new URL(req.url);
      const body = req.method === 'GET' || req.method === 'HEAD' ? new Uint8Array(0) : new Uint8Array(await req.arrayBuffer());
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      headers['content-length'] = String(body.byteLength);
      return new Promise<Response>((resolve, reject) => {
        const out = request(`${base}${u.pathname}${u.search}`, { method: req.method, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const h = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
            resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), { status: res.statusCode!, headers: h }));
          });
          res.on('error', reject);
        });
        out.on('error', reject);
        // Larger bodies in proportionally larger pieces (about 500 writes at most), so a test stays quick.
        const piece = Math.max(pieceBytes, Math.ceil(body.byteLength / 500));
        void (async () => {
          for (let at = 0; at < body.byteLength; at += piece) {
            out.write(body.subarray(at, at + piece));
            await new Promise((r) => setImmediate(r));
          }
          out.end();
        })();
      });
    },
  };
}

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
