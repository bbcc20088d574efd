// Node entry for self-hosting: the app on S3 or the file system, chosen by environment variables (see README).
import { pathToFileURL } from 'node:url';
import { startNodeServer } from './node-server.js';
import { createStoreFromEnv } from './store/store-from-env.js';
import { SessyncError } from '../shared/errors.js';
import { adminSecretProblem } from './admin-secret.js';

function portFromEnv(v: string | undefined): number {
  if (v === undefined || v === '') return 8787;
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new SessyncError('bad_input', `PORT must be a number from 0 to 65535, not "${v}"`);
  return Number(v);
}

/** `node dist/server.mjs`: self-hosting on S3 or the file system as the environment says (see README). */
async function main(): Promise<void> {
  // Signals are watched before the URL is printed: a supervisor may stop us as soon as it reads it.
  let stopRequested = false;
  let close: (() => Promise<void>) | undefined;
  const stop = () => {
    stopRequested = true;
    if (close) void close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  // Refused before the store is touched: a weak admin secret must not serve a single request.
  const adminSecret = process.env.SESSYNC_ADMIN_SECRET;
  const weak = adminSecret ? adminSecretProblem(adminSecret) : null;
  if (weak) throw new SessyncError('bad_input', weak);
  const store = await createStoreFromEnv(process.env);
  const server = await startNodeServer({
    store,
    port: portFromEnv(process.env.PORT),
    host: process.env.HOST ?? '127.0.0.1',
    ...(adminSecret ? { adminSecret } : {}),
  });
  close = server.close;
  process.stdout.write(`sessync service listening on ${server.url}${adminSecret ? '' : ' (admin API off: set SESSYNC_ADMIN_SECRET)'}\n`);
  if (stopRequested) stop();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    process.stderr.write(`sessync: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
