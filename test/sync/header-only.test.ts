// A session with only its header (`sessync new` without --model) is pushed, reaches the other machine, and grows there later.
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';
import { heads } from './kill-rig.js';

describe('a session with only a header', () => {
  const rig = useServer(undefined, 'sessync-header-only-');

  it('is announced by an empty first batch and created on the other machine; its entries follow', async () => {
    const R = 'git@github.com:acme/header-only.git';
    const a = new Machine(rig.root, 'a', { remote: R });
    const b = new Machine(rig.root, 'b', { remote: R });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    expect(readLog(a.fileOf(id)).ids).toEqual([]);
    // status says it still has to go, though it has no entry to count.
    expect((await a.ok(['status', '--json'])).sessions).toEqual([expect.objectContaining({ session: id, unpushedEntries: 0, notOnServer: true, remoteOnly: false })]);
    expect(await a.ok(['status'])).toContain(`${id}  0 to push, not on the server yet`);

    const pushed = await a.ok(['sync', '--json']);
    expect(pushed.sessions).toEqual([expect.objectContaining({ session: id, pushed: { batches: 1, entries: 0, bytes: 0 } })]);
    expect((await heads(rig.server)).filter((h) => h.session === id)).toEqual([expect.objectContaining({ seq: 1 })]);
    // Said once: a second sync sends nothing.
    expect((await a.ok(['sync', '--json'])).requests).toBe(1);
    expect((await a.ok(['status', '--json'])).sessions[0].notOnServer).toBeUndefined();

    // Counters that add up: the new session counts among those the pull wrote into (no more new than pulled into).
    const pulled = await b.ok(['sync', '--json']);
    expect(pulled).toMatchObject({ createdSessions: 1, pulledSessions: 1, pulledEntries: 0 });
    const bFile = b.fileOf(id);
    expect(readLog(bFile).header).toEqual({ ...readLog(a.fileOf(id)).header, cwd: b.project });
    expect(readLog(bFile).ids).toEqual([]);
    expect((await b.ok(['list', '--json'])).map((s: { id: string }) => s.id)).toEqual([id]);
    const c = new Machine(rig.root, 'c', { remote: R });
    await c.login(rig.server);
    expect(await c.ok(['pull'])).toMatch(/^pull: 1 session checked; pulled 0 entries into 1 session \(1 new here\); \d+ requests\n$/);

    // Its first entry, written later on A, reaches B's copy; and B's reply reaches A.
    await a.say(id, 'first words');
    await a.ok(['sync', '--json']);
    expect((await b.ok(['sync', '--json'])).pulledEntries).toBe(1);
    await b.say(id, 'reply from b');
    await b.ok(['sync', '--json']);
    expect((await a.ok(['sync', '--json'])).pulledEntries).toBe(1);
    expect(new Set(readLog(a.fileOf(id)).ids)).toEqual(new Set(readLog(bFile).ids));
    expect(readLog(bFile).ids).toHaveLength(2);
  }, 60_000);

  it('the server takes an empty batch only as a session\'s first, with its meta', async () => {
    const sha = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'; // sha-256 of ""
    const post = (body: object) =>
      fetch(`${rig.server.url}/v1/sessions/s-empty/batches`, { method: 'POST', headers: { authorization: `Bearer ${rig.server.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const envelope = (seq: number, entryCount: number) => ({ session: 's-empty', host: 'h1', seq, batchId: `b${seq}`, entryCount, sha256: sha, encoding: 'jsonl' });
    const meta = { header: { type: 'session', version: 3, id: 's-empty', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/x' }, projectKey: 'path:/x' };
    const noMeta = await post({ envelope: envelope(1, 0), body: '' });
    expect(noMeta.status).toBe(400);
    expect(((await noMeta.json()) as { error: { message: string } }).error.message).toMatch(/only a new session's first batch/);
    const countMismatch = await post({ envelope: envelope(1, 1), body: '', meta });
    expect(countMismatch.status).toBe(400);
    const ok = await post({ envelope: envelope(1, 0), body: '', meta });
    expect(ok.status).toBe(201);
    const later = await post({ envelope: envelope(2, 0), body: '', meta });
    expect(later.status).toBe(400);
  });
});
