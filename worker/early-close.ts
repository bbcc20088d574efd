// Node only: a request answered before its body was read (401, 413, ...) ends its connection instead of reading the rest.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * After the answer, what is still discarded so the client can read the answer before the socket
 * closes (closing with unread input sends a TCP reset, which can make a client lose the answer).
 */
const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 2_000;
/** A declared body this small is cheaper to read and drop than a new connection: Node does that and keeps the connection. */
const SMALL_BODY = 64 * 1024;

/** Whether what is left of the body may be large: chunked, or a Content-Length past SMALL_BODY. */
function mayBeLarge(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return declared === undefined || !/^\d+$/.test(declared) || Number(declared) > SMALL_BODY;
}

/**
 * Wraps a request listener so that a response sent while a large request body is still arriving says
 * `Connection: close`, half-closes the socket once the answer is out, discards at most
 * LINGER_BYTES or LINGER_MS more of the body, then closes. Without this Node reads an unwanted body
 * to its end to keep the connection alive: an unauthenticated client could make it read 400 MiB.
 */
export function closeEarlyAnswers(listener: (req: IncomingMessage, res: ServerResponse) => unknown): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!req.complete && mayBeLarge(req)) {
        this.shouldKeepAlive = false; // Node then sends Connection: close and calls socket.destroySoon() after the answer
        lingerInsteadOfReset(req, req.socket);
      }
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof res.writeHead;
    void listener(req, res);
  };
}

function lingerInsteadOfReset(req: IncomingMessage, socket: Socket): void {
  let started = false;
  // Node ends the connection through destroySoon(); this one ends the writing side now and the reading side a little later.
  socket.destroySoon = function (this: Socket) {
    if (started) return;
    started = true;
    this.end();
    let discarded = 0;
    const close = () => {
      clearTimeout(timer);
      if (!this.destroyed) this.destroy();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    // The rest of the body goes nowhere: not to the route that refused it, not into memory.
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) close();
    });
    if (req.readableEnded) return close(); // the body did arrive in the end: nothing left to drain
    req.once('end', close);
    req.once('error', close);
    req.resume();
    this.once('end', close);
  };
}
