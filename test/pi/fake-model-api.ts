// A stand-in for an OpenAI-compatible model API on 127.0.0.1 (the one thing the real pi CLI needs from outside):
// answers each chat completion with a numbered reply, streamed the way pi reads it, and records every request.
import { createServer, type Server } from 'node:http';

export interface ChatRequest {
  model: string;
  messages: { role: string; content: unknown }[];
  stream?: boolean;
}

export interface FakeModelApi {
  /** Base URL for pi's models.json (`.../v1`). */
  baseUrl: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

/** Text of a chat message (string content or text parts). */
export function chatText(m: { content: unknown }): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  return '';
}

export async function startFakeModelApi(): Promise<FakeModelApi> {
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not here"}}');
        return;
      }
      const r = JSON.parse(body) as ChatRequest;
      requests.push(r);
      const reply = `reply ${requests.length}`;
      const base = { id: `chatcmpl-${requests.length}`, object: 'chat.completion.chunk', created: 0, model: r.model };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: reply }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
