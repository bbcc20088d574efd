// A request handler for test proxies in front of the real server: passes each request on whole, and can lose the answer.
import { request, type IncomingMessage, type RequestListener } from 'node:http';

/**
 * Forwards each request to `upstream` (plain http) after reading it whole, recording "METHOD /path" in `forwarded`.
 * When `drops(method, url)` says so, the server's whole answer is read and then the client's connection is dropped
 * instead of handing it on: the server acted, the client never hears of it.
 */
export function forwardTo(upstream: string, forwarded: string[], drops: (method: string, url: string) => boolean): RequestListener {
  return (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      forwarded.push(`${req.method} ${req.url}`);
      const headers = { ...req.headers };
      delete headers.host;
      const out = request(`${upstream}${req.url}`, { method: req.method, headers }, (answer: IncomingMessage) => {
        if (!drops(req.method!, req.url!)) {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
          return;
        }
        answer.resume();
        answer.on('end', () => res.socket?.destroy());
      });
      out.end(Buffer.concat(parts));
    });
  };
}
