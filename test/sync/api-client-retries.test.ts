// ApiClient retries: a port nobody listens on ends them within the unreachable budget; once the server has answered, a refusal is a restart.
import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ApiClient, type RetryLimit } from '../../cli/api-client.js';
import { isSessyncError } from '../../shared/errors.js';
import { freePort } from './helpers.js';

function healthServer(port: number): Promise<Server> {
  const s = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ service: 'sessync', api: 1 }));
  });
  return new Promise((r) => s.listen(port, '127.0.0.1', () => r(s)));
}

describe('ApiClient retries on connections nobody accepts', () => {
  it('a server that never answered: retried only within the budget, each wait reported with that limit', async () => {
    const port = await freePort();
    const waits: RetryLimit[] = [];
    const api = new ApiClient({ url: `http://127.0.0.1:${port}`, retries: 6, baseDelayMs: 100, unreachableRetryMs: 400, onRetry: (_e, _n, _ms, limit) => waits.push(limit) });
    const err = await api.health().catch((e: unknown) => e);
    expect(isSessyncError(err, 'unavailable') && err.retryable).toBe(true);
    expect((err as { details: { reason: string } }).details.reason).toBe('ECONNREFUSED');
    // Waits of 50-100, 100-200, 200-400 ms: two or three fit in 400 ms, never the 6 retries of the schedule.
    expect(api.requestCount).toBeGreaterThanOrEqual(2);
    expect(api.requestCount).toBeLessThanOrEqual(4);
    expect(waits.every((w) => 'unreachableMs' in w && w.unreachableMs === 400)).toBe(true);
  });

  it('a server that answered, then went away: the whole retry schedule (a restart), and it succeeds when it is back', async () => {
    const port = await freePort();
    let server = await healthServer(port);
    const waits: RetryLimit[] = [];
    const api = new ApiClient({ url: `http://127.0.0.1:${port}`, retries: 6, baseDelayMs: 100, maxDelayMs: 200, unreachableRetryMs: 50, onRetry: (_e, n, _ms, limit) => {
      waits.push(limit);
      // Back after the third wait: long past the 50 ms budget a never-answered server would get.
      if (n === 3) void healthServer(port).then((s) => (server = s));
    } });
    await api.health();
    await new Promise((r) => server.close(r));
    await expect(api.health()).resolves.toEqual({ service: 'sessync', api: 1 });
    expect(waits.length).toBeGreaterThanOrEqual(3);
    expect(waits.every((w) => 'retries' in w && w.retries === 6)).toBe(true);
    await new Promise((r) => server.close(r));
  });
});
