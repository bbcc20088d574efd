// The loopback HTTP server under the fake model APIs: each request's body read whole, then handed to the API's handler.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts a server on 127.0.0.1 (a free port); `handle` gets the request's path without its query and its body text. */
export async function startLoopback(handle: (req: IncomingMessage, res: ServerResponse, path: string, body: string) => void): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    void (async () => {
      const parts: Buffer[] = [];
      for await (const c of req) parts.push(c as Buffer);
      handle(req, res, (req.url ?? '').split('?')[0]!, Buffer.concat(parts).toString('utf8'));
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
