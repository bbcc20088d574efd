// A large push request goes to fetch as a stream of its frames (the bodies uncopied), with its length; a retry sends a
// new stream of the same bytes, and the real server stores each batch once.
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { makeBatch, metaFor } from '../worker/routes-helpers.js';
import { startNodeServer, startWorkerdServer, useServer } from './helpers.js';

interface Seen {
  stream: boolean;
  length: string | null;
  type: string | null;
  bytes: Uint8Array;
}

/** fetch to the real server, recording each POST /v1/batches body; `fail` of them are answered 503 (a proxy in between) after the body was read. */
function recording(fail: number): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    if (!String(input).endsWith('/v1/batches')) return fetch(input, init);
    const stream = init?.body instanceof ReadableStream;
    const req = new Request(input, init);
    const bytes = new Uint8Array(await req.arrayBuffer());
    seen.push({ stream, length: req.headers.get('content-length'), type: req.headers.get('content-type'), bytes });
    if (seen.length <= fail) return new Response('busy', { status: 503 });
    return fetch(input, { method: 'POST', headers: req.headers, body: bytes });
  }) as typeof fetch;
  return { fetch: f, seen };
}

const big = (session: string) => makeBatch({ session, host: 'h1', seq: 1, meta: metaFor(session), lines: Array.from({ length: 100 }, (_, i) => ({ type: 'message', id: `${session}-${i}`, parentId: i ? `${session}-${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'x'.repeat(1000) } })) });

describe.each([
  ['the Node server', startNodeServer],
  ['workerd (wrangler dev)', startWorkerdServer],
])('push request bodies to %s', (_, start) => {
  const rig = useServer(start, 'sessync-stream-body-');

  it('a request over 256 KiB is a stream with its Content-Length; retried after a 503, the same bytes go again and are stored once', async () => {
    const rec = recording(1);
    const api = new ApiClient({ url: rig.server.url, token: rig.server.token, fetch: rec.fetch, baseDelayMs: 1, maxDelayMs: 1 });
    const items = await Promise.all(['sb1', 'sb2', 'sb3'].map(big));
    const r = await api.pushBatches(items);
    expect(r.results.map((x) => x.ok && x.status)).toEqual(['created', 'created', 'created']);
    expect(rec.seen).toHaveLength(2);
    for (const s of rec.seen) {
      expect(s.stream).toBe(true);
      expect(s.type).toBe(FRAMES_TYPE);
      expect(Number(s.length)).toBe(s.bytes.byteLength);
      expect(s.bytes.byteLength).toBeGreaterThan(256 * 1024);
    }
    expect(Buffer.from(rec.seen[1]!.bytes).equals(Buffer.from(rec.seen[0]!.bytes))).toBe(true);
    expect(api.bytesSent).toBe(2 * rec.seen[0]!.bytes.byteLength);
    // Stored once, as sent: the same batches again are answered as retries.
    const again = await api.pushBatches(items);
    expect(again.results.map((x) => x.ok && x.status)).toEqual(['exists', 'exists', 'exists']);
  }, 60_000);

  it('a small request is one buffer, as before', async () => {
    const rec = recording(0);
    const api = new ApiClient({ url: rig.server.url, token: rig.server.token, fetch: rec.fetch });
    const r = await api.pushBatches([await makeBatch({ session: 'sb-small', host: 'h1', seq: 1, meta: metaFor('sb-small') })]);
    expect(r.results[0]).toMatchObject({ ok: true, status: 'created' });
    expect(rec.seen.map((s) => s.stream)).toEqual([false]);
    expect(Number(rec.seen[0]!.length)).toBe(rec.seen[0]!.bytes.byteLength);
  }, 60_000);
});
