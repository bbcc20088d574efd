// Ids that are Object.prototype names (constructor, toString, valueOf, hasOwnProperty, __proto__) as host ids,
// session ids and project keys go through a real `sessync serve` and back like any other id.
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer, type TestServer } from './helpers.js';

const HOSTS = ['constructor', 'toString', 'valueOf', 'hasOwnProperty'];

const texts = (path: string) => readLog(path).entries.map((e) => (e.message as { content: string }).content);

/** A machine whose host id is `hostId`: a host.json as an older sessync wrote it (no folder mark), which is adopted. */
function machineWithHost(root: string, name: string, hostId: string): Machine {
  const m = new Machine(root, name);
  mkdirSync(join(m.home, 'sync'), { recursive: true, mode: 0o700 });
  writeFileSync(join(m.home, 'sync', 'host.json'), JSON.stringify({ hostId }) + '\n', { mode: 0o600 });
  return m;
}

/** One batch pushed through the HTTP API, with the session's meta: what any client could send. */
async function pushRaw(server: TestServer, o: { session: string; host: string; projectKey: string; cwd: string; text: string }): Promise<void> {
  const ts = new Date().toISOString();
  const body = JSON.stringify({ type: 'message', id: randomUUID(), parentId: null, timestamp: ts, message: { role: 'user', content: o.text } }) + '\n';
  const envelope = { session: o.session, host: o.host, seq: 1, batchId: randomUUID(), entryCount: 1, sha256: createHash('sha256').update(body).digest('hex'), encoding: 'jsonl' };
  const meta = { header: { type: 'session', version: 3, id: o.session, timestamp: ts, cwd: o.cwd }, projectKey: o.projectKey };
  const res = await fetch(`${server.url}/v1/sessions/${o.session}/batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ envelope, body, meta }),
  });
  expect(res.status, await res.text()).toBe(201);
}

describe('prototype names as ids, through a real server', () => {
  const rig = useServer(undefined, 'sessync-proto-');

  it('machines whose host ids are constructor, toString, valueOf, hasOwnProperty push, pull each other and pull back, without duplicates', async () => {
    const b = new Machine(rig.root, 'b');
    await b.login(rig.server);
    const made: { host: string; m: Machine; id: string }[] = [];
    for (const host of HOSTS) {
      const m = machineWithHost(rig.root, `m-${host}`, host);
      await m.login(rig.server);
      const id = await m.newSession();
      await m.say(id, `from ${host} 1`, `from ${host} 2`);
      await m.ok(['push', '--json']);
      made.push({ host, m, id });
    }
    const r = await b.run(['pull', '--all', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ createdSessions: HOSTS.length, pulledEntries: 2 * HOSTS.length, failed: 0 });
    for (const { host, id } of made) expect(texts(b.fileOf(id))).toEqual([`from ${host} 1`, `from ${host} 2`]);
    // b answers in each session; each machine pulls b's entry and none of its own back.
    for (const { id } of made) await b.say(id, 'from b');
    expect(await b.ok(['push', '--all', '--json'])).toMatchObject({ pushedEntries: HOSTS.length });
    for (const { host, m, id } of made) {
      const s = await m.ok(['sync', '--json']);
      expect(s, `${host}: ${JSON.stringify(s)}`).toMatchObject({ pulledEntries: 1, failed: 0 });
      expect(texts(m.fileOf(id))).toEqual([`from ${host} 1`, `from ${host} 2`, 'from b']);
      const st = (await m.syncState(id))!;
      expect(st.nextSeq, host).toBe(2);
      expect(await m.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, pushedEntries: 0 });
    }
    // And b, once more: nothing waits (the cursor holds each host as an own key).
    expect(await b.ok(['sync', '--all', '--json'])).toMatchObject({ pulledEntries: 0, failed: 0 });
    const status = await b.ok(['status', '--all', '--json']);
    expect(JSON.stringify(status)).not.toMatch(/"waitingBatches":[1-9]/);
  }, 180_000);

  it('sessions called constructor and toString, and project keys constructor and __proto__ (also in --map), are fetched and placed', async () => {
    const a = new Machine(rig.root, 'src');
    const elsewhere = realpathSync(a.project);
    await pushRaw(rig.server, { session: 'constructor', host: 'h1', projectKey: 'github.com/o/plain', cwd: elsewhere, text: 'session named constructor' });
    await pushRaw(rig.server, { session: 'toString', host: 'h1', projectKey: 'github.com/o/plain', cwd: elsewhere, text: 'session named toString' });
    await pushRaw(rig.server, { session: 'keyed-constructor', host: 'h1', projectKey: 'constructor', cwd: elsewhere, text: 'project key constructor' });
    await pushRaw(rig.server, { session: 'keyed-proto', host: 'h1', projectKey: '__proto__', cwd: elsewhere, text: 'project key __proto__' });
    const c = new Machine(rig.root, 'dst');
    await c.login(rig.server);
    const mapped = realpathSync(c.project);
    const r = await c.run(['pull', '--all', '--map', `__proto__=${mapped}`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ failed: 0 });
    for (const [id, text] of [['constructor', 'session named constructor'], ['toString', 'session named toString'], ['keyed-constructor', 'project key constructor'], ['keyed-proto', 'project key __proto__']]) {
      expect(texts(c.fileOf(id!)), id).toEqual([text]);
    }
    // --map __proto__=DIR files that project under DIR; the others keep their header's cwd.
    expect(readLog(c.fileOf('keyed-proto')).header.cwd).toBe(mapped);
    expect(readLog(c.fileOf('keyed-constructor')).header.cwd).toBe(elsewhere);
    // The mapping was saved as an own key and is used again by a later run.
    const saved = JSON.parse(readFileSync(join(c.home, 'sync', 'projects.json'), 'utf8')) as Record<string, string>;
    expect(Object.hasOwn(saved, '__proto__')).toBe(true);
  }, 120_000);
});
