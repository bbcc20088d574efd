// Serves the app over HTTP on Node with @hono/node-server, on whatever store the caller passes.
import { getRequestListener } from '@hono/node-server';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { closeEarlyAnswers } from './early-close.js';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';

export interface NodeServerOptions {
  store: BlobStore;
  /** Enables /v1/admin; without it the admin API answers 403. */
  adminSecret?: string;
  /** 0 picks a free port. */
  port: number;
  /** Interface to listen on (default 127.0.0.1: reachable only from this machine). */
  host?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startNodeServer(opts: NodeServerOptions): Promise<RunningServer> {
  const app = createApp(opts.adminSecret === undefined ? { store: opts.store } : { store: opts.store, adminSecret: opts.adminSecret });
  // Draining of unread bodies is done by closeEarlyAnswers (bounded), not by the adapter (which reads up to 64 MiB).
  const server = createServer(closeEarlyAnswers(getRequestListener(app.fetch, { autoCleanupIncoming: false })));
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'EADDRINUSE'
        ? new SessyncError('bad_input', `port ${opts.port} on ${host} is already in use: pick another with --port (0 picks a free one)`)
        : new SessyncError('unavailable', `cannot listen on ${host}:${opts.port}: ${e.message}`, { cause: e }));
    });
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections(); // idle keep-alive connections would hold close() open
      }),
  };
}
