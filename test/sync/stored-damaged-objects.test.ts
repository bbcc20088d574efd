// Stored objects an older server wrote damaged (a meta whose header nests 100,000 deep, a batch object that is not
// JSON): the server answers no 5xx, serves what it can and marks the rest; the client names them and goes on.
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsStore } from '../../worker/store/fs-store.js';
import { BLOBS_DIR } from '../../worker/local-server.js';
import { keys } from '../../shared/keys.js';
import type { BatchProblem as Problem } from '../../cli/sync/session-sync-state.js';
import { Machine, readLog, useServer, type TestServer } from './helpers.js';

const OLD_HOST = 'old-host-1';
const DEEP = 100_000;

const texts = (path: string) => readLog(path).entries.map((e) => (e.message as { content: string }).content);

/** Writes `text` as the object at `key` of the server's file store, bypassing every route (as an older server did). */
async function putRaw(server: TestServer, key: (account: string) => string, text: string): Promise<void> {
  const store = new FsStore(join(server.dataDir!, BLOBS_DIR));
  expect(await store.putIfAbsent(key(await accountOf(server)), new TextEncoder().encode(text))).toBe(true);
}

/** Batch `seq` of OLD_HOST as an object that is not JSON at all, with a head that names it. */
async function plantUnreadableBatch(server: TestServer, session: string, seq: number): Promise<void> {
  await putRaw(server, (a) => keys.batch(a, session, OLD_HOST, seq), '{"envelope":{"session": this is not JSON');
  await putRaw(server, (a) => keys.head(a, session, OLD_HOST, seq), JSON.stringify({ seq, batchId: randomUUID() }));
}

/** A meta whose header nests DEEP levels: JSON.parse reads it, no JSON.stringify can write it into an answer. */
async function plantDeepMeta(server: TestServer, session: string, cwd: string): Promise<void> {
  const header = JSON.stringify({ type: 'session', version: 3, id: session, timestamp: '2026-01-01T00:00:00.000Z', cwd }).slice(0, -1);
  const text = `{"header":${header},"extra":${'['.repeat(DEEP)}${']'.repeat(DEEP)}},"projectKey":"path:/nowhere","created":"2026-01-01T00:00:00.000Z"}`;
  await putRaw(server, (a) => keys.sessionMeta(a, session), text);
}

async function accountOf(server: TestServer): Promise<string> {
  const res = await fetch(`${server.url}/v1/whoami`, { headers: { authorization: `Bearer ${server.token}` } });
  return ((await res.json()) as { account: string }).account;
}

function api(server: TestServer, method: string, path: string, body?: unknown): Promise<Response> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  return fetch(`${server.url}${path}`, init);
}

describe('stored objects an older server wrote damaged', () => {
  const rig = useServer(undefined, 'sessync-damaged-');

  it('a meta nested 100,000 deep: GET answers a non-retryable 422 for that session; pull --all names it and pulls the others', async () => {
    const a = new Machine(rig.root, 'a');
    await a.login(rig.server);
    const good = await a.newSession();
    await a.say(good, 'good one', 'good two');
    await a.ok(['push', '--json']);
    const damaged = randomUUID();
    await plantDeepMeta(rig.server, damaged, a.project);
    await putRaw(rig.server, (acc) => keys.batch(acc, damaged, OLD_HOST, 1), JSON.stringify({
      envelope: { session: damaged, host: OLD_HOST, seq: 1, batchId: 'b1', entryCount: 0, sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', encoding: 'jsonl' },
      body: '',
    }));
    await putRaw(rig.server, (acc) => keys.head(acc, damaged, OLD_HOST, 1), JSON.stringify({ seq: 1, batchId: 'b1' }));

    const res = await api(rig.server, 'GET', `/v1/sessions/${damaged}`);
    expect(res.status).toBe(422);
    const err = ((await res.json()) as { error: { code: string; message: string; retryable: boolean } }).error;
    expect(err).toMatchObject({ code: 'corrupt', retryable: false });
    expect(err.message).toContain(`session ${damaged}: the metadata stored on this server is damaged (its header nests JSON deeper than 64 levels)`);
    // Only that session: the good one is served as before.
    expect((await api(rig.server, 'GET', `/v1/sessions/${good}`)).status).toBe(200);

    const b = new Machine(rig.root, 'b');
    await b.login(rig.server);
    for (let run = 0; run < 2; run++) {
      const r = await b.run(['pull', '--all', '--json']);
      expect(r.code, r.stderr).toBe(1); // as for any session that fails alone
      const sum = r.json();
      expect(sum.failed).toBe(1);
      const bad = sum.sessions.find((s: { session: string }) => s.session === damaged);
      expect(bad.error).toMatchObject({ code: 'corrupt', message: expect.stringMatching(/metadata stored on this server is damaged/) });
      expect(texts(b.fileOf(good))).toEqual(['good one', 'good two']);
      expect(b.sessionFiles().some((p) => p.includes(damaged))).toBe(false);
    }

    // A project-scoped sync (which asks each remote session's project) names it and goes on too.
    const c = new Machine(rig.root, 'c', { project: a.project });
    await c.login(rig.server);
    const s = await c.run(['sync']);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stderr).toContain(`session ${damaged}: server: session ${damaged}: the metadata stored on this server is damaged`);
    expect(texts(c.fileOf(good))).toEqual(['good one', 'good two']);

    // ...and it can still be deleted.
    const del = await api(rig.server, 'DELETE', `/v1/sessions/${damaged}`, { host: 'cleaner' });
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ session: damaged, complete: true });
    expect((await api(rig.server, 'GET', `/v1/sessions/${damaged}`)).status).toBe(410);
  }, 120_000);

  it('a batch object that is not JSON: pull serves it as damaged by host and seq; the client names it and merges the rest', async () => {
    const a = new Machine(rig.root, 'd');
    await a.login(rig.server);
    const mixed = await a.newSession();
    await a.say(mixed, 'mixed one');
    const healthy = await a.newSession();
    await a.say(healthy, 'healthy one');
    await a.ok(['push', '--json']);
    await plantUnreadableBatch(rig.server, mixed, 1);
    const lonely = randomUUID();
    await putRaw(rig.server, (acc) => keys.sessionMeta(acc, lonely), JSON.stringify({ header: { type: 'session', version: 3, id: lonely, timestamp: '2026-01-01T00:00:00.000Z', cwd: a.project }, projectKey: 'path:/nowhere', created: '2026-01-01T00:00:00.000Z' }));
    await plantUnreadableBatch(rig.server, lonely, 1);

    const res = await api(rig.server, 'POST', `/v1/sessions/${mixed}/pull`, { cursor: {} });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { batches: { envelope: { host: string; seq: number }; body: string; damaged?: string }[]; cursor: Record<string, number> };
    const served = page.batches.find((x) => x.envelope.host === OLD_HOST)!;
    expect(served).toMatchObject({ envelope: { host: OLD_HOST, seq: 1, entryCount: 0 }, body: '', damaged: expect.stringMatching(/not JSON/) });
    expect(page.cursor[OLD_HOST]).toBe(1);

    const b = new Machine(rig.root, 'e');
    await b.login(rig.server);
    const r = await b.run(['pull', '--all', '--json']);
    expect(r.code, r.stderr).toBe(1); // the session with nothing readable fails alone
    const sum = r.json();
    expect(sum).toMatchObject({ failed: 1, damagedBatches: 2 });
    const m = sum.sessions.find((s: { session: string }) => s.session === mixed);
    expect(m.error).toBeUndefined();
    expect((m.badBatches as Problem[]).map((p) => [p.host, p.seq, p.line ?? null])).toEqual([[OLD_HOST, 1, null]]);
    expect(m.badBatches[0].reason).toMatch(/the server cannot read it \(stored damaged: the stored object is not JSON/);
    expect(texts(b.fileOf(mixed))).toEqual(['mixed one']);
    expect(texts(b.fileOf(healthy))).toEqual(['healthy one']);
    const lone = sum.sessions.find((s: { session: string }) => s.session === lonely);
    expect(lone.error).toMatchObject({ code: 'corrupt', message: expect.stringMatching(/every batch the server holds is damaged \(batch 1 of host old-host-1: the server cannot read it/) });

    // Pushing over it is a clear conflict, not a 500.
    const line = JSON.stringify({ type: 'message', id: 'again-1', parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'again' } }) + '\n';
    const sha = createHash('sha256').update(line, 'utf8').digest('hex');
    const push = await api(rig.server, 'POST', `/v1/sessions/${mixed}/batches`, {
      envelope: { session: mixed, host: OLD_HOST, seq: 1, batchId: 'again', entryCount: 1, sha256: sha, encoding: 'jsonl' },
      body: line,
    });
    const pushText = await push.clone().text();
    expect(push.status, pushText).toBe(409);
    expect(((await push.json()) as { error: { message: string } }).error.message).toMatch(/is stored damaged on this server/);
  }, 120_000);
});
