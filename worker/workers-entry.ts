// Workers entry: wires the R2 binding and the admin secret binding into the app.
import { createApp } from './app.js';
import type { AppBindings } from './app-env.js';
import { R2Store } from './store/r2-store.js';
import { SessyncError } from '../shared/errors.js';

// One store per bucket binding object; the binding is the same across requests of an isolate.
const stores = new WeakMap<R2Bucket, R2Store>();

const app = createApp({
  store: (c) => {
    const bucket = c.env.BUCKET;
    if (!bucket) throw new SessyncError('internal', 'server misconfigured: no R2 binding named BUCKET (see wrangler.toml)');
    let store = stores.get(bucket);
    if (!store) stores.set(bucket, (store = new R2Store(bucket)));
    return store;
  },
});

export default { fetch: app.fetch } satisfies ExportedHandler<AppBindings>;
