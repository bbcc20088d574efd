// Child for s3-warning-switch.test.ts: builds a real S3Client through S3Store.newClient with the switch as the
// parent set it, and prints what the process saw: warnings emitted, and the switch's value after construction.
import { S3Store } from '../../worker/store/s3-store.js';

const name = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
const warnings: string[] = [];
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message.split('\n')[0]}`));
const during: (string | undefined)[] = [];
S3Store.newClient({ ...S3Store.clientConfig({ bucket: 'bkt', endpoint: 'http://127.0.0.1:1' }), region: 'us-east-1' });
during.push(process.env[name]);
// process.emitWarning delivers on the next tick: wait past it before reporting.
setImmediate(() => setImmediate(() => {
  process.stdout.write(JSON.stringify({ warnings, after: process.env[name] ?? null }) + '\n');
}));
