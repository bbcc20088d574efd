// The api client's HTTP on node:http(s): a request body written as its chunks (one writev), the answer read as bytes.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { concatChunks } from '../shared/batch-frames.js';
import { SessyncError } from '../shared/errors.js';
import { version } from '../package.json';

/** One request as the api client makes it: the body is text, or binary chunks sent as they are (never joined). */
export interface TransportRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | readonly Uint8Array[];
  signal: AbortSignal;
  /**
   * False for a request the server must not get twice (it creates or revokes something). It then goes on a
   * connection of its own, never a kept-alive one (whose close by the server races the write, so a failure there
   * cannot say whether the server read the request), and is never sent again here. A failure that happened before
   * the connection was made carries `notSent: true`: only then may the caller send it again.
   */
  idempotent?: boolean;
}

/** A transport failure known to have happened before any byte of the request could reach the server. */
export function failedBeforeSending(e: unknown): boolean {
  return (e as { notSent?: unknown } | null)?.notSent === true;
}

/** Failures that only happen before a connection exists (fetch cannot say more: its errors carry no such mark). */
const BEFORE_CONNECTING = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** The part of a fetch Response the api client reads. */
export interface TransportResponse {
  status: number;
  ok: boolean;
  /** A header's value (names in any case), or null. */
  header(name: string): string | null;
  text(): Promise<string>;
  bytes(): Promise<Uint8Array>;
}

export type Transport = (url: string, req: TransportRequest) => Promise<TransportResponse>;

/** Idle connections are kept for the next request (a push or pull run makes dozens in a row) and never hold the process open. */
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

/**
 * Redirects are followed as fetch follows them: a GET for any of these; another method only for 307 and 308, which
 * keep the method and the body (301, 302 and 303 would turn it into a GET, which no route of the api answers).
 */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function follows(method: string, status: number): boolean {
  return method === 'GET' || method === 'HEAD' ? REDIRECTS.has(status) : status === 307 || status === 308;
}

/** Headers that are the account's credentials: never sent on to another origin, as fetch drops them. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * Sent unless the caller set them, as fetch sends its own: a proxy or CDN in front of the server (Cloudflare's, for a
 * Workers deployment) compresses JSON answers only for a client that accepts it, and some refuse a request with no
 * User-Agent. Every encoding named here is decoded (see decode).
 */
const DEFAULT_HEADERS: Readonly<Record<string, string>> = { 'accept-encoding': 'gzip, deflate, br', 'user-agent': `sessync/${version}` };

/**
 * A Transport on node:http. Compared with fetch, a multi-megabyte push costs no web stream, no copies of its chunks
 * and no per-chunk promise: the chunks go to the socket corked, so the kernel takes them in few writes. Connection
 * errors keep their code (ECONNREFUSED, ENOTFOUND, ...) where the api client looks for it, as with fetch's `cause`.
 */
export const nodeTransport: Transport = async (url, req) => {
  let headers: Record<string, string> = { ...DEFAULT_HEADERS, ...req.headers };
  for (let hops = 0; ; hops++) {
    const res = await send(url, { ...req, headers }, true);
    const location = res.headers.location;
    if (typeof location === 'string' && hops < MAX_REDIRECTS && follows(req.method, res.statusCode ?? 0)) {
      res.resume();
      const next = new URL(location, url);
      // Refused here, as the server's answer (it did get the request): never "not sent", so never sent again.
      const refused = refusedRedirect(next, url);
      if (refused) throw refused;
      // Another host, port or scheme (https to http included) gets no token: a redirect must not hand it on.
      if (next.origin !== new URL(url).origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIALS.includes(k.toLowerCase())));
      url = next.toString();
      continue;
    }
    return answer(res);
  }
};

/**
 * `url` as it may be shown: any `user:pass@` left out (a password must not end up in scrollback or a log), even from
 * text that does not parse as a URL, so up to the last `@` before a query or fragment.
 */
export function withoutUserinfo(url: string): string {
  return url.replace(/^([^/?#]*\/\/|)[^?#]*@/, '$1');
}

/**
 * Why a redirect to `next` is not followed, or null: a URL with a user name or password (node:http would send them as
 * Basic auth; fetch refuses them) or of another protocol. Not retryable: the server would answer the same again.
 */
function refusedRedirect(next: URL, from: string): SessyncError | null {
  const origin = withoutUserinfo(new URL(from).origin);
  if (next.username !== '' || next.password !== '') {
    return new SessyncError('wrong_server', `the server at ${origin} redirected to a URL with a user name or password (${withoutUserinfo(next.toString())}); sessync does not follow it (it authenticates with a token): log in with the URL the server should be reached at`, { retryable: false, details: { reason: 'ERR_URL_CREDENTIALS' } });
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    return new SessyncError('wrong_server', `the server at ${origin} redirected to a ${next.protocol} URL; sessync follows only http and https: log in with the URL the server should be reached at`, { retryable: false, details: { reason: 'ERR_INVALID_PROTOCOL' } });
  }
  return null;
}

function send(url: string, req: TransportRequest, mayRetry: boolean): Promise<IncomingMessage> {
  const u = new URL(url);
  // The caller's own URL (a redirect's is checked before it is followed; the api client's by normaliseUrl): a mistake
  // in it is the same on every try, so bad_input, not a failure to reach the server that would be retried.
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return Promise.reject(new SessyncError('bad_input', `unsupported protocol ${u.protocol} in the server URL: use http or https`, { details: { reason: 'ERR_INVALID_PROTOCOL' } }));
  // node:http would send a user name and password in the URL as Basic auth (fetch refuses such a URL): never.
  if (u.username !== '' || u.password !== '') return Promise.reject(new SessyncError('bad_input', 'the server URL must not hold a user name or password: sessync authenticates with a token', { details: { reason: 'ERR_URL_CREDENTIALS' } }));
  const fresh = req.idempotent === false;
  const headers: Record<string, string> = { ...req.headers };
  if (typeof req.body === 'string' && headers['content-length'] === undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
  if (req.body === undefined && req.method !== 'GET' && req.method !== 'HEAD') headers['content-length'] = '0';
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (req.signal.aborted) return reject(abortError());
    const make = u.protocol === 'https:' ? httpsRequest : httpRequest;
    // agent false: a new connection, closed after the answer.
    const cr: ClientRequest = make(u, { method: req.method, headers, agent: fresh ? false : agents[u.protocol as 'http:' | 'https:'] });
    // Until the connection is made (TLS done, for https) no byte of the request can have left: a failure then is
    // marked notSent. A socket already connected when handed over (a kept-alive one) may have carried it.
    let connected = false;
    cr.once('socket', (s) => {
      if (!s.connecting) connected = true;
      else s.once(u.protocol === 'https:' ? 'secureConnect' : 'connect', () => (connected = true));
    });
    const onAbort = (): void => {
      cr.destroy(abortError());
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    let answered = false;
    cr.once('response', (res) => {
      // From here the answer's body is read by `answer`; an abort then ends that read (see collect).
      answered = true;
      req.signal.removeEventListener('abort', onAbort);
      attachAbort(res, req.signal);
      resolve(res);
    });
    // Kept for the request's life: an error after the answer began is the answer's to report (see collect).
    cr.on('error', (e: NodeJS.ErrnoException) => {
      req.signal.removeEventListener('abort', onAbort);
      if (answered) return;
      if (!connected) Object.assign(e, { notSent: true });
      // A kept-alive connection the server closed just as it was reused (its idle timeout): sent again once, on a new
      // one, as Node's docs advise. Only an idempotent request (a push is, by seq and batch id) is ever on a reused
      // connection, so only one is ever sent again here.
      if (mayRetry && !fresh && cr.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE') && !req.signal.aborted) {
        send(url, req, false).then(resolve, reject);
        return;
      }
      reject(e);
    });
    const body = req.body;
    if (body === undefined) cr.end();
    else if (typeof body === 'string') cr.end(body);
    else {
      cr.cork();
      for (const chunk of body) if (chunk.byteLength > 0) cr.write(chunk);
      cr.end(); // uncorks: the chunks go out together
    }
  });
}

function attachAbort(res: IncomingMessage, signal: AbortSignal): void {
  if (signal.aborted) {
    res.destroy(abortError());
    return;
  }
  const onAbort = (): void => {
    res.destroy(abortError());
  };
  signal.addEventListener('abort', onAbort, { once: true });
  res.once('close', () => signal.removeEventListener('abort', onAbort));
}

function abortError(): Error {
  return Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }); // as fetch words it
}

function answer(res: IncomingMessage): TransportResponse {
  const status = res.statusCode ?? 0;
  let body: Promise<Buffer> | undefined;
  const read = (): Promise<Buffer> => (body ??= collect(res));
  return {
    status,
    ok: status >= 200 && status < 300,
    header: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
    text: async () => (await read()).toString('utf8'),
    bytes: read,
  };
}

/** The whole answer body, decoded if the server (or a proxy before it) compressed it, as fetch decodes it. */
function collect(res: IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let done = false;
    res.on('data', (c: Buffer) => parts.push(c));
    res.once('error', (e) => {
      done = true;
      reject(e);
    });
    res.once('end', () => {
      done = true;
      try {
        resolve(decode(parts.length === 1 ? parts[0]! : Buffer.concat(parts), res.headers['content-encoding']));
      } catch (e) {
        reject(e);
      }
    });
    // Closed before its end without an error (the peer went away mid-answer): a dropped read, as fetch reports it.
    res.once('close', () => {
      if (!done) reject(Object.assign(new Error('the connection closed before the answer ended'), { code: 'ECONNRESET' }));
    });
  });
}

function decode(bytes: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return bytes;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(bytes);
    case 'deflate':
      return inflateSync(bytes);
    case 'br':
      return brotliDecompressSync(bytes);
    default:
      throw new Error(`the answer is in an encoding this client cannot read (${encoding})`);
  }
}

/** A Transport on a fetch function (a caller's own: tests, a proxy, an in-process app): as the api client always sent it. */
export function fetchTransport(fetchFn: typeof fetch): Transport {
  return async (url, req) => {
    let res: Response;
    try {
      res = await fetchFn(url, { method: req.method, headers: req.headers, ...fetchBody(req.body), signal: req.signal });
    } catch (e) {
      const code = (e as { cause?: { code?: unknown } } | null)?.cause?.code;
      if (typeof code === 'string' && BEFORE_CONNECTING.has(code) && typeof e === 'object' && e !== null) Object.assign(e, { notSent: true });
      throw e;
    }
    return {
      status: res.status,
      ok: res.ok,
      header: (name) => res.headers.get(name),
      text: () => res.text(),
      bytes: async () => new Uint8Array(await res.arrayBuffer()),
    };
  };
}

/** Bodies from this size go to fetch as a stream of their chunks (see fetchBody). */
const STREAM_BODY_BYTES = 256 * 1024;

/**
 * A binary body for fetch. A large one as a stream of the chunks, as they are (the session files' own bytes): fetch
 * copies a buffer body whole, twice, and a many-session push then spends more time collecting those copies than
 * making them. A small one as one buffer (one copy, and no stream to set up per request).
 */
function fetchBody(body: TransportRequest['body']): { body?: BodyInit; duplex?: 'half' } {
  if (body === undefined || typeof body === 'string') return body === undefined ? {} : { body };
  let bytes = 0;
  for (const c of body) bytes += c.byteLength;
  if (bytes < STREAM_BODY_BYTES) return { body: concatChunks([...body]) as Uint8Array<ArrayBuffer> };
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      // Each read hands on a few chunks: a header and its body, with no copy.
      for (let i = 0; i < 8 && next < body.length; i++) c.enqueue(body[next++]!);
      if (next >= body.length) c.close();
    },
  });
  return { body: stream, duplex: 'half' };
}
