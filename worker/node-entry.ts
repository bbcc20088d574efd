// Node entry for self-hosting: the app on S3 or the file system, chosen by environment variables (see README).
import { pathToFileURL } from 'node:url';
import { startNodeServer } from './node-server.js';
import { createStoreFromEnv } from './store/store-from-env.js';

/** `tsx worker/node-entry.ts`: self-hosting on S3 or the file system as the environment says (see README). */
async function main(): Promise<void> {
  const store = await createStoreFromEnv(process.env);
  const adminSecret = process.env.SESSYNC_ADMIN_SECRET;
  const server = await startNodeServer({
    store,
    port: Number(process.env.PORT ?? 8787),
    host: process.env.HOST ?? '127.0.0.1',
    ...(adminSecret ? { adminSecret } : {}),
  });
  process.stdout.write(`sessync service listening on ${server.url}${adminSecret ? '' : ' (admin API off: set SESSYNC_ADMIN_SECRET)'}\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    process.stderr.write(`sessync: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
