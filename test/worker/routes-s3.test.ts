// The push races on S3 (real conditional writes on Ceph radosgw, started by the test): nothing lost, nothing stored twice.
import { describe, it } from 'vitest';
import { freshBucket, radosgwInstalled, RADOSGW_INSTALL_HINT, startRadosgw } from '../helpers/radosgw.js';
import { describeRouteRaces } from './routes-races.case.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

if (radosgwInstalled()) {
  describeRouteRaces('S3 on Ceph radosgw', async () => freshBucket(await startRadosgw()));
} else {
  console.warn(`\n#### route races on S3 SKIPPED: Ceph radosgw is not installed (${RADOSGW_INSTALL_HINT}) ####\n`);
  describe.skip(`push races [S3] (SKIPPED: radosgw not installed: ${RADOSGW_INSTALL_HINT})`, () => {
    it('needs radosgw', () => undefined);
  });
}
