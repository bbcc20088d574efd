// A fake OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI headless: records each request, answers with SSE.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { body } from './fake-anthropic.js';

export interface FakeResponses {
  /** The base URL Codex's provider config takes (ends in /v1). */
  url: string;
  /** Bodies of the POST /v1/responses requests, in arrival order. */
  requests: Record<string, unknown>[];
  /** The text the next answers say (a default is used once the list is empty). */
  replies: string[];
  close(): Promise<void>;
}

function sse(res: ServerResponse, data: Record<string, unknown>): void {
  res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
}

function answer(res: ServerResponse, n: number, text: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = `resp_fake_${n}`;
  const item = { type: 'message', role: 'assistant', id: `msg_fake_${n}`, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  sse(res, { type: 'response.created', response: { id } });
  sse(res, { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
  sse(res, { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text });
  sse(res, { type: 'response.output_item.done', output_index: 0, item });
  sse(res, { type: 'response.completed', response: { id, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 11 } } });
  res.end();
}

export async function startFakeResponses(): Promise<FakeResponses> {
  const requests: Record<string, unknown>[] = [];
  const replies: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'POST' && path === '/v1/responses') {
        requests.push(JSON.parse(text) as Record<string, unknown>);
        answer(res, requests.length, replies.shift() ?? 'ok from the fake model');
        return;
      }
      // Anything else Codex may ask (model lists): an empty answer it copes with.
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not in the fake"}}');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    replies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The texts of a Responses request's input messages, as "role: text", in order. */
export function inputTexts(request: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const m of (request.input as { type?: string; role?: string; content?: unknown }[]) ?? []) {
    if (m.type !== 'message' || !Array.isArray(m.content)) continue;
    for (const c of m.content as { text?: unknown }[]) if (typeof c.text === 'string') out.push(`${m.role}: ${c.text}`);
  }
  return out;
}
