// A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code CLI headless: records each request, answers with SSE.
import type { ServerResponse } from 'node:http';
import { startLoopback } from './fake-api-server.js';

export interface FakeAnthropic {
  url: string;
  /** Bodies of the POST /v1/messages requests, in arrival order. */
  requests: Record<string, unknown>[];
  /** The text the next answers say (a default is used once the list is empty). */
  replies: string[];
  close(): Promise<void>;
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function answer(res: ServerResponse, text: string, model: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = `msg_fake_${Math.random().toString(36).slice(2, 12)}`;
  sse(res, 'message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: Record<string, unknown>[] = [];
  const replies: string[] = [];
  const server = await startLoopback((req, res, path, text) => {
    if (req.method === 'POST' && path === '/v1/messages') {
      const b = JSON.parse(text) as Record<string, unknown>;
      requests.push(b);
      const model = typeof b.model === 'string' ? b.model : 'claude-fake';
      if (b.stream === true) answer(res, replies.shift() ?? 'ok from the fake model', model);
      else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'msg_fake', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: replies.shift() ?? 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }));
      }
      return;
    }
    if (path === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    if (path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [], has_more: false }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `fake API: no ${req.method} ${path}` } }));
  });
  return { url: server.origin, requests, replies, close: server.close };
}
