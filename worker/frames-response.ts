// A frames answer (pulls): its chunks handed to Node's response at once where the request came through Node, else streamed.
import type { Context } from 'hono';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { FRAMES_TYPE, encodeFrames, type Frame } from '../shared/batch-frames.js';

/** What of Node's http.ServerResponse the answer is written to, without a node:* import: this file also runs in workerd. */
interface NodeOutgoing {
  headersSent: boolean;
  writableEnded: boolean;
  destroyed: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  cork(): void;
  uncork(): void;
  write(chunk: Uint8Array): boolean;
  end(): unknown;
}

/** The request's Node response when @hono/node-server hands it over (as `c.env.outgoing`) and nothing is written to it yet. */
function unwrittenNodeOutgoing(c: Context): NodeOutgoing | null {
  const out = (c.env as { outgoing?: Partial<NodeOutgoing> } | undefined)?.outgoing;
  if (!out || typeof out.writeHead !== 'function' || typeof out.write !== 'function' || typeof out.cork !== 'function' || typeof out.uncork !== 'function' || typeof out.end !== 'function') return null;
  return out.headersSent === false && out.writableEnded === false && out.destroyed === false ? (out as NodeOutgoing) : null;
}

/** Bytes of chunks handed on per pull of the answer stream. */
const STREAM_BATCH_BYTES = 256 * 1024;

/**
 * The answer of `frames`, their chunks as they are (the bodies as read from the store), never joined into one buffer
 * (that cost a 100 MB pull about 50 ms of the server's CPU and as much again in garbage collection; a Blob of the
 * chunks was worse: a copy to build it and another to stream it). Its length is known, so it is sent.
 * On Node the chunks go to the response in one corked write (one writev; the socket takes them as it drains, and
 * they are in memory already): the web stream the adapter would read them through costs a promise and a write per
 * chunk, about a sixth of the server's CPU for a 100 MB pull. Elsewhere (workerd) they are streamed.
 */
export function framesResponse(c: Context, frames: Frame[]): Response {
  const chunks = encodeFrames(frames);
  let length = 0;
  for (const ch of chunks) length += ch.byteLength;
  const headers = { 'content-type': FRAMES_TYPE, 'content-length': String(length) };
  const out = unwrittenNodeOutgoing(c);
  if (out) {
    out.writeHead(200, headers);
    out.cork();
    for (const ch of chunks) out.write(ch);
    out.uncork();
    out.end();
    // @hono/node-server's own marker: the answer is out, it writes nothing more.
    return RESPONSE_ALREADY_SENT;
  }
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    // Several chunks per read, so a page of many small batches is not a promise per header line.
    pull(controller) {
      for (let sent = 0; next < chunks.length && sent < STREAM_BATCH_BYTES; next++) {
        sent += chunks[next]!.byteLength;
        controller.enqueue(chunks[next]!);
      }
      if (next === chunks.length) controller.close();
    },
  });
  return new Response(body, { headers });
}
