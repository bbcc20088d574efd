// A session synced and then deleted on one machine stays deleted there (sync does not pull it back, status says the
// server keeps it) until `sessync restore`; for pi sessions and for Claude Code's (deleted by hand or by its cleanup).
import { existsSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, useServer } from '../sync/helpers.js';
import { claudePair, lineSet, turn } from './claude-rig.js';

describe('deleted here stays deleted, until restore (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-del-');

  it('pi: not pulled back after others add to it; status shows it; restore brings every entry back', async () => {
    const a = new Machine(rig.root, 'pi-a', { remote: 'git@github.com:Acme/Del.git' });
    const b = new Machine(rig.root, 'pi-b', { remote: 'git@github.com:Acme/Del.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const bFile = b.fileOf(id);
    rmSync(bFile);
    await a.say(id, 'three');
    await a.ok(['sync', '--json']);
    const r = await b.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`session ${id} was deleted here`);
    expect(r.stderr).toContain(`sessync restore ${id}`);
    expect(existsSync(bFile)).toBe(false);
    const st = await b.ok(['status', '--json']);
    expect(st.sessions).toMatchObject([{ session: id, remoteOnly: true, deletedHere: true }]);
    expect(await b.ok(['status'])).toContain(`deleted here, kept on the server (sessync restore ${id})`);
    const back = await b.ok(['restore', id.slice(0, 13), '--json']);
    expect(back.restored).toMatchObject([{ session: id }]);
    expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    expect(entrySet(b.fileOf(id)).size).toBe(3);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, failed: 0 });
    const after = await b.ok(['status', '--json']);
    expect(after.sessions[0].deletedHere).toBeUndefined();
  });

  it('Claude Code: a session file deleted (as its cleanup does) is not brought back; restore puts it where it was', async () => {
    const { a, b } = await claudePair(rig.root, 'DelCC', rig.server);
    const id = '77777777-3333-4444-8555-666666666666';
    const cwd = realpathSync(a.project);
    const first = turn(id, cwd, null, 'one', ['abababab-0000-4000-8000-000000000001', 'abababab-0000-4000-8000-000000000002'], '2026-01-06T00:00:00.000Z');
    a.write(`${id}.jsonl`, first);
    a.write(`${id}/subagents/agent-abc.jsonl`, turn(id, cwd, null, 'sub', ['abababab-0000-4000-8000-0000000000a1', 'abababab-0000-4000-8000-0000000000a2'], '2026-01-06T00:00:01.000Z'));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    expect(b.read(`${id}.jsonl`)).toBe(first);
    // A turn on B that reaches B's mirror (list reads it in) but not the server before the session is deleted.
    const onB = turn(id, realpathSync(b.project), 'abababab-0000-4000-8000-000000000002', 'on b', ['abababab-0000-4000-8000-0000000000b1', 'abababab-0000-4000-8000-0000000000b2'], '2026-01-06T00:00:30.000Z');
    b.write(`${id}.jsonl`, first + onB);
    await b.ok(['list', '--agent', 'claude-code', '--json']);
    rmSync(`${b.folder}/${id}.jsonl`);
    rmSync(`${b.folder}/${id}`, { recursive: true });
    const second = turn(id, cwd, 'abababab-0000-4000-8000-000000000002', 'two', ['abababab-0000-4000-8000-000000000003', 'abababab-0000-4000-8000-000000000004'], '2026-01-06T00:01:00.000Z');
    a.write(`${id}.jsonl`, first + second);
    await a.ok(['sync', '--json']);
    const r = await b.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`Claude Code session ${id} was deleted`);
    expect(existsSync(`${b.folder}/${id}.jsonl`)).toBe(false);
    expect((await b.ok(['status', '--agent', 'claude-code', '--json'])).sessions).toMatchObject([{ session: id, deletedHere: true }]);
    const back = await b.ok(['restore', id, '--json']);
    expect(back.restored).toMatchObject([{ session: id, path: `${b.folder}/${id}.jsonl` }]);
    // Every line is back, B's unpushed turn too, and no copy of the old mirror is left beside the new one.
    for (const l of lineSet(first + second + onB)) expect(lineSet(b.read(`${id}.jsonl`))).toContain(l);
    expect(b.read(`${id}/subagents/agent-abc.jsonl`)).toBe(a.read(`${id}/subagents/agent-abc.jsonl`));
    expect(readdirSync(join(b.home, 'agents'), { recursive: true }).filter((f) => String(f).includes('deleted-here'))).toEqual([]);
    // The next syncs carry B's turn to A, and then nothing moves.
    for (const m of [b, a, b]) await m.ok(['sync', '--json']);
    for (const l of lineSet(onB)) expect(lineSet(a.read(`${id}.jsonl`))).toContain(l);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, pushedEntries: 0, failed: 0 });
  });

  it('restore of a session nobody has: not_found', async () => {
    const a = new Machine(rig.root, 'none', { remote: 'git@github.com:Acme/None.git' });
    await a.login(rig.server);
    const r = await a.run(['restore', 'deadbeef']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no session matches "deadbeef"');
  });
});
