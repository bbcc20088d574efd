// Pushes as frames on the memory and file-system stores (the real app, its real routes), and over HTTP to the Node
// server with each body arriving in many small chunks (decoded, hashed and scanned as they come).
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, appFetcher } from './routes-helpers.js';
import { describePushFrames } from './push-frames.case.js';
import { startNodeServer } from '../../worker/node-server.js';
import { wireFetcher } from './node-rig.js';

describePushFrames('memory', async () => {
  const store = new MemoryStore();
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })) };
});

describePushFrames('file system', async () => {
  const dir = tempDir('sessync-push-frames-');
  const store = new FsStore(dir.dir);
  await store.open();
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })), cleanup: dir.cleanup };
});

describePushFrames('Node server over HTTP, bodies in small chunks', async () => {
  const dir = tempDir('sessync-push-frames-node-');
  const store = new FsStore(dir.dir);
  await store.open();
  const server = await startNodeServer({ store, adminSecret: TEST_ADMIN_SECRET, port: 0 });
  return { store, fetcher: wireFetcher(server.url), cleanup: async () => { await server.close(); dir.cleanup(); } };
});
