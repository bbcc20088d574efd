// Lines the server would refuse never block a session: an invalid entry id, a line too long to read at once,
// and a pending batch the server refuses are reported and left behind; the entries after them are pushed.
import { appendFileSync, statSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

const line = (o: Record<string, unknown>) => JSON.stringify(o) + '\n';

describe('lines the server refuses', () => {
  const rig = useServer(undefined, 'sessync-bad-');

  it('an entry id the server refuses is skipped and reported; the later entries are pushed; status is clean', async () => {
    const a = new Machine(rig.root, 'a');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'first');
    const file = a.fileOf(id);
    // Written straight into the file, as pi or another tool could.
    appendFileSync(file, line({ type: 'message', id: 'bad id', parentId: null, timestamp: new Date().toISOString(), message: { role: 'user', content: 'hi' } }));
    await a.say(id, 'after');
    const r = await a.run(['push', '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ pushedEntries: 2, skippedLines: 1, failed: 0 });
    expect(JSON.stringify(r.json().sessions[0].skippedLines)).toContain('bad id');
    const st = await a.ok(['status', '--json']);
    expect(st.sessions.find((s: { session: string }) => s.session === id)).toMatchObject({ unpushedEntries: 0, pendingBatch: false });
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 0, skippedLines: 0 });
  }, 60_000);

  it('a pending batch the server refuses is built again from the file instead of being resent forever', async () => {
    const a = new Machine(rig.root, 'p');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'first');
    await a.ok(['push', '--json']);
    await a.say(id, 'second');
    // A batch written down (by an older sessync) holding a line the server refuses, not yet acknowledged.
    const st = (await a.syncState(id))!;
    const good = readLog(a.fileOf(id)).entries.at(-1)!;
    const body = line({ ...good, id: 'bad id' }) + line(good);
    st.pending = { seq: st.nextSeq, batchId: randomUUID(), entryCount: 2, sha256: createHash('sha256').update(body).digest('hex'), endOffset: statSync(a.fileOf(id)).size, body };
    await a.writeSyncState(st);
    const r = await a.run(['push', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ pushedEntries: 1, failed: 0 });
    expect((await a.syncState(id))?.pending).toBeNull();
    const b = new Machine(rig.root, 'p2');
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    expect(readLog(b.fileOf(id)).entries.map((e) => (e.message as { content: string }).content)).toEqual(['first', 'second']);
  }, 60_000);

  it('a 6 MB line is skipped with a note and the entry after it is pushed', async () => {
    const a = new Machine(rig.root, 'big');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'before');
    appendFileSync(a.fileOf(id), line({ type: 'message', id: 'huge-0001', parentId: null, timestamp: new Date().toISOString(), message: { role: 'user', content: 'x'.repeat(6 * 1024 * 1024) } }));
    await a.say(id, 'after');
    const r = await a.run(['push', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ pushedEntries: 2, skippedLines: 1, failed: 0 });
    expect(r.json().sessions[0].skippedLines[0].reason).toMatch(/over the \d+-byte limit/);
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 0 });
  }, 60_000);
});
