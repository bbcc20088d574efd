// End-to-end encryption at rest over raw HTTP on S3 (Ceph radosgw, started by the test).
import { describe, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { freshBucket, radosgwInstalled, RADOSGW_INSTALL_HINT, startRadosgw } from '../helpers/radosgw.js';
import { TEST_ADMIN_SECRET, appFetcher } from './routes-helpers.js';
import { describeSealing } from './sealing.case.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

if (radosgwInstalled()) {
  describeSealing('S3 on Ceph radosgw', async () => {
    const { store, cleanup } = await freshBucket(await startRadosgw());
    return { store, fetcher: appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET })), cleanup };
  });
} else {
  console.warn(`\n#### sealing on S3 SKIPPED: Ceph radosgw is not installed (${RADOSGW_INSTALL_HINT}) ####\n`);
  describe.skip(`end-to-end encryption at rest [S3] (SKIPPED: radosgw not installed: ${RADOSGW_INSTALL_HINT})`, () => {
    it('needs radosgw', () => undefined);
  });
}
