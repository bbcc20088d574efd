import { env } from 'cloudflare:workers';
import { it, expect } from 'vitest';
it('r2 put-if-absent', async () => {
  const b = (env as unknown as { BUCKET: R2Bucket }).BUCKET;
  const a = await b.put('k', 'x', { onlyIf: new Headers({ 'If-None-Match': '*' }) });
  const c = await b.put('k', 'y', { onlyIf: new Headers({ 'If-None-Match': '*' }) });
  expect(a).not.toBeNull();
  expect(c).toBeNull();
});
