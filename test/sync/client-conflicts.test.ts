// API client error mapping and retries; same-id-different-content conflicts kept aside; a server-only session pulled for resume.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { pullRemoteSession } from '../../cli/sync/remote-resume.js';
import { isSessyncError } from '../../shared/errors.js';
import { entrySet, pairWithSession, readLog, runCli, useServer } from './helpers.js';
import { appendWithId, clashingPair } from './conflict-pair.js';

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return isSessyncError(e) ? e.code : `not a SessyncError: ${e}`;
  }
}

describe('ApiClient', () => {
  it('retries 503 then succeeds; never retries 400; maps non-sessync answers to wrong_server', async () => {
    let calls = 0;
    const { url, server } = await listen((req, res) => {
      calls++;
      if (req.url === '/v1/health' && calls <= 2) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unavailable', message: 'starting' } }));
      } else if (req.url === '/v1/health') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ service: 'sessync', api: 1 }));
      } else if (req.url === '/v1/whoami') {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'bad_input', message: 'nope' } }));
      } else if (req.url === '/v1/changes') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a router login page</html>');
      } else {
        res.writeHead(404, { 'content-type': 'text/html' }).end('not here');
      }
    });
    try {
      const api = new ApiClient({ url, token: 't', baseDelayMs: 5 });
      expect(await api.health()).toEqual({ service: 'sessync', api: 1 });
      expect(api.requestCount).toBe(3);
      const before = api.requestCount;
      expect(await codeOf(api.whoami())).toBe('bad_input');
      expect(api.requestCount - before).toBe(1);
      expect(await codeOf(api.changes())).toBe('wrong_server');
      expect(await codeOf(api.sessionMeta('abc'))).toBe('wrong_server');
    } finally {
      server.close();
    }
  });

  it('an unreachable server is unavailable and retryable, after the configured retries', async () => {
    const { url, server } = await listen(() => undefined);
    server.close();
    const api = new ApiClient({ url, token: 't', retries: 2, baseDelayMs: 5 });
    const err = await api.whoami().catch((e) => e);
    expect(isSessyncError(err, 'unavailable') && err.retryable).toBe(true);
    expect(api.requestCount).toBe(3);
    expect(await codeOf(new ApiClient({ url }).whoami())).toBe('unauthorized'); // no token: said before any request
  });
});

describe('against the real service', () => {
  const rig = useServer(undefined, 'sessync-conflict-');

  it('the same entry id with different content is kept aside and reported on both machines, never dropped', async () => {
    const R = 'git@github.com:acme/conflict.git';
    const { a, b, id, clash } = await clashingPair(rig.root, ['a', 'b'], R, rig.server);
    const bSync = await b.ok(['sync', '--json']);
    const aSync = await a.ok(['sync', '--json']);
    expect(bSync.conflicts).toBe(1);
    expect(aSync.conflicts).toBe(1);
    for (const [m, mine, theirs] of [[a, 'version A', 'version B'], [b, 'version B', 'version A']] as const) {
      const log = readLog(m.fileOf(id));
      expect(log.entries.filter((e) => e.id === clash).map((e) => (e.message as { content: string }).content)).toEqual([mine]);
      const aside = join(m.serverState(), 'conflicts', `${id}.jsonl`);
      expect(existsSync(aside)).toBe(true);
      const kept = readFileSync(aside, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(kept).toHaveLength(1);
      expect(kept[0].entry.message.content).toBe(theirs);
    }
    // A conflict found by a pull before the local version was pushed: that version still goes out afterwards.
    const clash2 = 'clash-0002';
    await appendWithId(a, id, clash2, 'A2');
    await appendWithId(b, id, clash2, 'B2');
    await a.ok(['push', '--json']);
    expect((await b.ok(['pull', '--json'])).conflicts).toBe(1);
    expect((await b.ok(['push', '--json'])).pushedEntries).toBe(1);
    expect((await a.ok(['pull', '--json'])).conflicts).toBe(1);
    const asideA = readFileSync(join(a.serverState(), 'conflicts', `${id}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(asideA.map((x) => x.entry.message.content)).toEqual(['version B', 'B2']);
    // Another sync does not record it twice.
    await a.ok(['sync', '--json']);
    expect(readFileSync(join(a.serverState(), 'conflicts', `${id}.jsonl`), 'utf8').trim().split('\n')).toHaveLength(2);
  }, 90_000);

  it('pullRemoteSession finds a server-only session by id prefix and files it under this project', async () => {
    const { a, b, id } = await pairWithSession(rig.root, ['ra', 'rb'], ['git@github.com:acme/remote-resume.git', 'https://github.com/acme/remote-resume.git'], rig.server, 'resume me elsewhere');
    await a.ok(['push', '--json']);
    const path = await pullRemoteSession(id.slice(0, 18), { cwd: b.project, env: { ...process.env, ...b.env } });
    expect(path).toBe(b.fileOf(id));
    expect(readLog(path).header.cwd).toBe(b.project);
    expect([...entrySet(path).entries()]).toEqual([...entrySet(a.fileOf(id)).entries()]);
    const missing = await pullRemoteSession('ffffffff-nothing', { cwd: b.project, env: { ...process.env, ...b.env } }).catch((e) => e);
    expect(isSessyncError(missing, 'not_found')).toBe(true);
    // resume now finds it locally; the next test resumes a server-only session directly.
    expect((await b.ok(['resume', id, '--json'])).id).toBe(id);
  }, 60_000);

  it('`sessync resume <prefix>` pulls a session that exists only on the server, then resumes it', async () => {
    const { a, b, id } = await pairWithSession(rig.root, ['rc', 'rd'], ['git@github.com:acme/resume-cli.git', 'https://github.com/acme/resume-cli.git'], rig.server, 'first', 'second');
    await a.ok(['push', '--json']);
    expect(() => b.fileOf(id)).toThrow(/found 0/);
    const resumed = await b.ok(['resume', id.slice(0, 20), '--json']);
    expect(resumed.id).toBe(id);
    expect(resumed.path).toBe(b.fileOf(id));
    expect(resumed.messageCount).toBe(2);
    expect([...entrySet(b.fileOf(id)).entries()]).toEqual([...entrySet(a.fileOf(id)).entries()]);
    // Not found anywhere: a clear not-found error, nothing created.
    const miss = await runCli(['resume', 'ffffffff-nowhere', '--json', '--cwd', b.project], { env: b.env });
    expect(miss.code).not.toBe(0);
    expect(JSON.parse(miss.stderr).error.code).toBe('not_found');
  }, 60_000);
});

describe('a session file rewritten under the pushed offset', () => {
  const rig = useServer(undefined, 'sessync-rewrite-');

  it('is pushed again from the start and merges without duplicates', async () => {
    const R = 'git@github.com:acme/rewrite.git';
    const { a, b, id } = await pairWithSession(rig.root, ['a', 'b'], [R, R], rig.server, 'one', 'two', 'three');
    await a.ok(['push', '--json']);
    // Another tool rewrites the file shorter (drops the last entry), then a new entry is appended.
    const file = a.fileOf(id);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    writeFileSync(file, lines.slice(0, -1).join('\n') + '\n');
    await a.say(id, 'four');
    const again = await a.run(['push']);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/pushing it again from the start/);
    await b.ok(['pull', '--json']);
    const ids = readLog(b.fileOf(id)).ids;
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(4); // one, two, three (from the first push) and four
  }, 60_000);
});
