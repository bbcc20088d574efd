// A proxy in front of a real server that refuses pull requests while told to: a mock of a server failing one route.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RefusingProxy {
  /** The proxy's URL, to log in with. */
  url: string;
  /** While true, every POST to a pull route is answered 409 `conflict` "mock refusal" (not retryable). */
  refuse: boolean;
  close(): void;
}

export async function startRefusingProxy(serverUrl: string): Promise<RefusingProxy> {
  const target = new URL(serverUrl);
  const state = { refuse: false };
  const proxy = createServer((req, res) => {
    if (state.refuse && req.method === 'POST' && /\/pull/.test(req.url ?? '')) {
      req.resume();
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'conflict', message: 'mock refusal', retryable: false } }));
      return;
    }
    const p = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 500, r.headers);
      r.pipe(res);
    });
    req.pipe(p);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    get refuse() {
      return state.refuse;
    },
    set refuse(v: boolean) {
      state.refuse = v;
    },
    close: () => proxy.close(),
  };
}
