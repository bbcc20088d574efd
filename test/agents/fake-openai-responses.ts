// A fake OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI headless: records each request, answers with SSE.
import type { ServerResponse } from 'node:http';
import { startLoopback } from './fake-api-server.js';

export interface FakeResponses {
  /** Base URL for a model provider's base_url (ends in /v1). */
  url: string;
  /** Bodies of the POST /v1/responses requests, in arrival order. */
  requests: Record<string, unknown>[];
  /** The text the next answers say (a default is used once the list is empty). */
  replies: string[];
  close(): Promise<void>;
}

function sse(res: ServerResponse, data: { type: string } & Record<string, unknown>): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

function answer(res: ServerResponse, text: string, model: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = `resp_fake_${Math.random().toString(36).slice(2, 12)}`;
  const item = { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  sse(res, { type: 'response.created', response: { id, object: 'response', model, status: 'in_progress', output: [] } });
  sse(res, { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
  sse(res, { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: item.id, delta: text });
  sse(res, { type: 'response.output_item.done', output_index: 0, item });
  sse(res, {
    type: 'response.completed',
    response: { id, object: 'response', model, status: 'completed', output: [item], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } },
  });
  res.end();
}

export async function startFakeResponses(): Promise<FakeResponses> {
  const requests: Record<string, unknown>[] = [];
  const replies: string[] = [];
  const server = await startLoopback((req, res, path, text) => {
    if (req.method === 'POST' && path === '/v1/responses') {
      const b = JSON.parse(text) as Record<string, unknown>;
      requests.push(b);
      answer(res, replies.shift() ?? 'ok from the fake model', typeof b.model === 'string' ? b.model : 'fake-model');
      return;
    }
    res.writeHead(path === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(path === '/v1/models' ? { object: 'list', data: [] } : { error: { type: 'not_found', message: `fake API: no ${req.method} ${path}` } }));
  });
  return { url: `${server.origin}/v1`, requests, replies, close: server.close };
}

/**
 * The turns of a Responses API request's input whose text matches `ours` (the test's own prompts and answers; what
 * Codex adds around them, instructions and environment notes, left out), in order, as "role: text".
 */
export function responsesConversation(request: Record<string, unknown>, ours: RegExp): string[] {
  const out: string[] = [];
  for (const m of (request.input as { type?: string; role?: string; content?: unknown }[]) ?? []) {
    if (m.type !== undefined && m.type !== 'message') continue;
    const parts = typeof m.content === 'string' ? [{ type: 'input_text', text: m.content }] : ((m.content as { type: string; text?: string }[]) ?? []);
    for (const p of parts) if (typeof p.text === 'string' && ours.test(p.text.trim())) out.push(`${m.role}: ${p.text.trim()}`);
  }
  return out;
}
