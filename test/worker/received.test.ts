// The server's received time of a batch on the memory and file-system stores.
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, appFetcher } from './routes-helpers.js';
import { describeReceived } from './received.case.js';

describeReceived('memory', async () => {
  const store = new MemoryStore();
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })) };
});

describeReceived('file system', async () => {
  const dir = tempDir('sessync-received-');
  const store = new FsStore(dir.dir);
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })), cleanup: dir.cleanup };
});
