// A push whose client has gone before the route reads its body, on the real Node server: it ends as an aborted request, it does not wait forever.
import { getRequestListener } from '@hono/node-server';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { createApp } from '../../worker/app.js';
import { closeEarlyAnswers } from '../../worker/early-close.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { TEST_ADMIN_SECRET } from './routes-helpers.js';

let server: Server;
let port: number;
let token: string;
const store = new MemoryStore();

beforeAll(async () => {
  const app = createApp({ store, adminSecret: TEST_ADMIN_SECRET });
  const created = await app.fetch(new Request('http://x/v1/admin/accounts', { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_SECRET}`, 'content-type': 'application/json' }, body: '{}' }));
  token = ((await created.json()) as { token: string }).token;
  const listener = closeEarlyAnswers(getRequestListener(app.fetch, { autoCleanupIncoming: false }));
  // The app sees each request only once its connection has closed: the route then reads a body that is already gone.
  server = createServer((req, res) => void req.socket.once('close', () => listener(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a client gone before the server reads its body', () => {
  it('the push ends as an aborted request (one warning), nothing is stored', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const sock = connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => sock.once('connect', resolve));
      const head = `POST /v1/sessions/s1/batches HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${FRAMES_TYPE}\r\nContent-Length: 5000\r\n\r\n`;
      await new Promise<void>((resolve, reject) => sock.write(head + 'sessync-frames 1\n', (e) => (e ? reject(e) : resolve())));
      sock.destroy();
      await vi.waitFor(() => expect(warn).toHaveBeenCalled(), { timeout: 20_000, interval: 50 });
      expect(warn.mock.calls.map((c) => c.map(String).join(' '))).toEqual([expect.stringMatching(/POST \/v1\/sessions\/s1\/batches: aborted request/)]);
      expect((await store.list({ prefix: 'a/' })).keys.filter((k) => k.includes('/s1/'))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
