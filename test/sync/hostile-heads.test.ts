// A server that lists a session id like `../../escaped` (broken or hostile) never makes the client write outside its
// folders: the head is ignored and named, the valid sessions are pulled. The real server refuses such names on the
// way in, so it cannot produce this: a MOCK server (a small node:http app below) answers instead.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Machine, readLog, tempDir } from './helpers.js';

const EVIL = ['../../../../../../escaped', '..', 'a/b', 'x\\..\\y'];
const GOOD = 'good-session-1';

/** A body of one entry and its envelope, for `session`. */
function batch(session: string, text: string) {
  const body = JSON.stringify({ type: 'message', id: `e-${text}`, parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: text } }) + '\n';
  return { envelope: { session, host: 'h1', seq: 1, batchId: 'b1', entryCount: 1, sha256: createHash('sha256').update(body).digest('hex'), encoding: 'jsonl' }, body };
}

/** MOCK sessync server: the protocol's answers, with hostile session ids in the change feed. */
function mockServer(): Server {
  return createServer((req, res) => {
    const send = (v: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    const url = new URL(req.url ?? '/', 'http://x');
    const session = decodeURIComponent(url.pathname.split('/')[3] ?? '');
    if (url.pathname === '/v1/health') return send({ service: 'sessync', api: 1 });
    if (url.pathname === '/v1/whoami') return send({ account: 'acct' });
    if (url.pathname === '/v1/changes') return send({ heads: [...EVIL.map((s) => ({ session: s, host: 'h1', seq: 1 })), { session: GOOD, host: 'h1', seq: 1 }, { session: GOOD, host: '../h', seq: 1 }] });
    if (req.method === 'GET' && url.pathname.startsWith('/v1/sessions/')) {
      return send({ session, header: { type: 'session', version: 3, id: session, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/srv/app' }, projectKey: 'path:/srv/app', created: '2026-01-01T00:00:00.000Z', hosts: { h1: 1 } });
    }
    if (req.method === 'POST' && url.pathname.endsWith('/pull')) return send({ batches: [batch(GOOD, session === GOOD ? 'good' : 'evil')], cursor: { h1: 1 }, more: false });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'no such route' } }));
  });
}

function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...allFiles(p));
    else out.push(p);
  }
  return out;
}

describe('heads with names no sessync server accepts', () => {
  let server: Server;
  let url = '';
  const root = tempDir('sessync-hostile-');

  beforeAll(async () => {
    server = mockServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    root.cleanup();
  });

  it('are ignored and named by pull --all; nothing is written outside SESSYNC_HOME; the valid session is pulled', async () => {
    const m = new Machine(join(root.dir, 'deep', 'er'), 'm');
    await m.ok(['login', url, '--token', 't'.repeat(40), '--json']);
    const r = await m.run(['pull', '--all', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const sum = r.json();
    expect((sum.ignoredHeads as { session: string; host: string }[]).map((h) => `${h.session} ${h.host}`)).toEqual([...EVIL.map((s) => `${s} h1`), `${GOOD} ../h`]);
    expect(sum.sessions.map((s: { session: string }) => s.session)).toEqual([GOOD]);
    expect(readLog(m.fileOf(GOOD)).entries.map((e) => (e.message as { content: string }).content)).toEqual(['good']);
    // Every file of the run is inside the machine's home.
    const outside = allFiles(root.dir).filter((p) => !p.startsWith(m.home + '/'));
    expect(outside).toEqual([]);
    const status = await m.ok(['status', '--all', '--json']);
    expect(status.ignoredHeads).toHaveLength(EVIL.length + 1);
    expect(status.sessions.map((s: { session: string }) => s.session)).toEqual([GOOD]);
    const human = await m.run(['pull', '--all']);
    expect(human.stderr).toContain('ignored a head the server listed with an invalid name: session "../../../../../../escaped"');
  }, 60_000);
});
