// End-to-end encryption at rest over raw HTTP on the memory and file-system stores.
import { createApp } from '../../worker/app.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { tempDir } from '../helpers/cli.js';
import { TEST_ADMIN_SECRET, appFetcher } from './routes-helpers.js';
import { describeSealing } from './sealing.case.js';

describeSealing('memory', async () => {
  const store = new MemoryStore();
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })) };
});

describeSealing('file system', async () => {
  const dir = tempDir('sessync-sealing-');
  const store = new FsStore(dir.dir);
  return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })), cleanup: dir.cleanup };
});
