// Frames answers of several MB over HTTP from the real Node server (written straight to Node's response): a slow reader
// gets every byte, and a reader that hangs up mid-answer leaves the server serving the next pull.
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { readPullFrames } from '../../cli/sync/pull-frames.js';
import { sha256Hex } from '../../worker/sha256.js';
import { makeBatch, metaFor } from './routes-helpers.js';
import { startNodeRig, type NodeRig } from './node-rig.js';

const SESSIONS = ['wire-a', 'wire-b', 'wire-c'];
const BATCHES = 2;
/** About 900 KB per batch: a page of the three sessions is about 5 MB, far more than a socket buffer holds. */
const LINES = 900;

let rig: NodeRig;
let token: string;
const bodies = new Map<string, string>();

beforeAll(async () => {
  rig = await startNodeRig();
  token = rig.alice.token!;
  for (const session of SESSIONS) {
    for (let seq = 1; seq <= BATCHES; seq++) {
      const lines = Array.from({ length: LINES }, (_, i) => ({ type: 'message', id: `${session}-${seq}-${i}`, parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: `${session} ${seq} ${i} `.padEnd(1000, 'x') } }));
      const b = await makeBatch({ session, host: 'h', seq, lines, ...(seq === 1 ? { meta: metaFor(session) } : {}) });
      bodies.set(`${session}/${seq}`, b.body);
      expect((await rig.alice.push(b)).status).toBe(201);
    }
  }
});

afterAll(async () => {
  await rig.close();
});

/** POST /v1/pulls asking for frames; `onResponse` gets Node's response to read (or drop) as it likes. */
function pullRequest(onResponse: (res: IncomingMessage) => void): void {
  const body = JSON.stringify({ sessions: SESSIONS.map((session) => ({ session, cursor: {} })) });
  const req = request(`${rig.url}/v1/pulls`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: FRAMES_TYPE, 'content-length': Buffer.byteLength(body) } }, onResponse);
  req.on('error', () => undefined); // the test that hangs up makes this fire; its checks are on the server's next answer
  req.end(body);
}

/** Reads the answer slowly (a pause after every chunk), so the server's writes wait on a full socket. */
function slowPull(): Promise<{ status: number; length: string | undefined; bytes: Uint8Array }> {
  return new Promise((resolve, reject) => {
    pullRequest((res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        res.pause();
        setTimeout(() => res.resume(), 1);
      });
      res.on('end', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], bytes: new Uint8Array(Buffer.concat(chunks)) }));
      res.on('error', reject);
    });
  });
}

describe('frames answers over HTTP from the Node server', () => {
  it('reach a slow reader whole: the length declared, every body byte for byte', async () => {
    const r = await slowPull();
    expect(r.status).toBe(200);
    expect(r.bytes.byteLength).toBeGreaterThan(4 * 1024 * 1024);
    expect(r.length).toBe(String(r.bytes.byteLength));
    const items = readPullFrames(r.bytes, SESSIONS, 'test');
    for (const [i, session] of SESSIONS.entries()) {
      const item = items[i]!;
      expect(item.ok, session).toBe(true);
      if (!item.ok) continue;
      expect(item.more).toBe(false);
      expect(item.batches.map((b) => b.envelope.seq)).toEqual([1, 2]);
      for (const b of item.batches) {
        const body = b.body as Uint8Array;
        expect(Buffer.from(body).toString('utf8')).toBe(bodies.get(`${session}/${b.envelope.seq}`));
        expect(await sha256Hex(body)).toBe(b.envelope.sha256);
      }
    }
  });

  it('survive a reader that hangs up after the first chunk: the next pull is answered whole', async () => {
    await new Promise<void>((resolve) => {
      pullRequest((res) => {
        res.once('data', () => {
          res.destroy();
          resolve();
        });
      });
    });
    const r = await slowPull();
    expect(r.status).toBe(200);
    expect(r.length).toBe(String(r.bytes.byteLength));
    expect(readPullFrames(r.bytes, SESSIONS, 'test').every((x) => x.ok && x.batches.length === BATCHES)).toBe(true);
  });
});
