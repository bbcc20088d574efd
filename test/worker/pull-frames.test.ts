// Pulls as frames on the memory and file-system stores (the real app, its real routes), and over HTTP from the Node server.
import { afterAll } from 'vitest';
import { createApp } from '../../worker/app.js';
import { startNodeServer, type RunningServer } from '../../worker/node-server.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, appFetcher } from './routes-helpers.js';
import { wireFetcher } from './node-rig.js';
import { describePullFrames } from './pull-frames.case.js';

describePullFrames('memory', async () => {
  const store = new MemoryStore();
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })), oneSessionPerPull: false };
});

describePullFrames('file system', async () => {
  const dir = tempDir('sessync-pull-frames-');
  const store = new FsStore(dir.dir);
  await store.open();
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })), oneSessionPerPull: false };
});

// The same answers over HTTP from the real Node server, where a frames answer is written straight to Node's response.
const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describePullFrames('Node server over HTTP', async () => {
  const dir = tempDir('sessync-pull-frames-node-');
  const store = new FsStore(dir.dir);
  await store.open();
  const server = await startNodeServer({ store, adminSecret: TEST_ADMIN_SECRET, port: 0 });
  servers.push(server);
  return { store, fetcher: wireFetcher(server.url), oneSessionPerPull: false };
});
