// `sessync rm <ref>` without --remote, between two real machines (CLI processes) on a real `sessync serve`: the file
// goes as if deleted by hand, the server keeps the session, sync never brings it back, `sessync restore` does.
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, syncedPair, tempDir, useServer } from '../sync/helpers.js';
import { claudePair, turn } from '../agents/claude-rig.js';

// Each test its own project: a sync pulls every session of its project, other tests' ones too.
const remote = (name: string) => `git@github.com:acme/rm-local-${name}.git`;

describe('rm without --remote (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-rmlocal-');

  it('deleted here stays deleted after another machine appends; status says so; restore brings every entry back', async () => {
    const { a, b, id } = await syncedPair(rig.root, ['a', 'b'], remote('two'), rig.server, 'one', 'two');
    const bFile = b.fileOf(id);

    const rm = await b.ok(['rm', id.slice(0, 13), '--json']);
    expect(rm).toMatchObject({ session: id, path: bFile, remote: false, deletedHere: true });
    expect(existsSync(bFile)).toBe(false);
    expect(await b.run(['rm', id])).toMatchObject({ code: 1 }); // gone: a second rm finds nothing here

    // Before anyone adds to it: status already says deleted here, and a sync leaves it deleted.
    expect((await b.ok(['status', '--json'])).sessions).toEqual([expect.objectContaining({ session: id, remoteOnly: true, deletedHere: true })]);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, createdSessions: 0, failed: 0 });
    expect(existsSync(bFile)).toBe(false);

    // Another machine appends: the next sync still does not pull it back, and says why.
    await a.say(id, 'three');
    await a.ok(['sync', '--json']);
    const r = await b.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`session ${id} was deleted here`);
    expect(r.stderr).toContain(`sessync restore ${id}`);
    expect(existsSync(bFile)).toBe(false);
    expect(b.sessionFiles()).toEqual([]);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, createdSessions: 0, failed: 0 });
    expect(b.sessionFiles()).toEqual([]);

    const st = await b.ok(['status', '--json']);
    expect(st.sessions).toEqual([expect.objectContaining({ session: id, remoteOnly: true, deletedHere: true })]);
    const human = await b.ok(['status']);
    expect(human).toContain(`deleted here, kept on the server (sessync restore ${id})`);
    expect(human).not.toContain('only on the server');

    const back = await b.ok(['restore', id.slice(0, 13), '--json']);
    expect(back.restored).toMatchObject([{ session: id, path: bFile }]);
    expect([...entrySet(bFile).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    expect(entrySet(bFile).size).toBe(3);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, pushedEntries: 0, failed: 0 });
    const after = await b.ok(['status', '--json']);
    expect(after.sessions).toEqual([expect.objectContaining({ session: id, remoteOnly: false })]);
    expect(after.sessions[0].deletedHere).toBeUndefined();
    // The server kept it whole all along: a's copy did not change.
    expect(entrySet(a.fileOf(id)).size).toBe(3);
  });

  it('pull <id> of a session deleted here leaves it deleted and names restore, with or without newer batches', async () => {
    const { a, b, id } = await syncedPair(rig.root, ['pa', 'pb'], remote('pull-ref'), rig.server, 'one');
    await b.ok(['rm', id, '--json']);
    // Seen failing on old code: "pull: 1 session checked; pulled 0 entries ..." and not a word of the deletion.
    for (const more of [false, true]) {
      if (more) {
        await a.say(id, 'two');
        await a.ok(['sync', '--json']);
      }
      const r = await b.run(['pull', id.slice(0, 13)]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`session ${id} was deleted here`);
      expect(r.stderr).toContain(`sessync restore ${id}`);
      expect(b.sessionFiles()).toEqual([]);
    }
  });

  it('the human text says where it went and how to bring it back', async () => {
    const a = new Machine(rig.root, 'text', { remote: remote('text') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'hello');
    await a.ok(['sync', '--json']);
    const file = a.fileOf(id);
    const out = await a.ok(['rm', id]);
    expect(out).toContain(`removed ${file}`);
    expect(out).toContain(`sessync restore ${id}`);
    expect(out).toContain(`sessync rm ${id} --remote`);
  });

  it('a session never synced (no sync state, never logged in): with --force its file goes and rm succeeds', async () => {
    const dir = tempDir('sessync-rmlocal-nosync-');
    try {
      const m = new Machine(dir.dir, 'solo');
      const id = await m.newSession();
      await m.say(id, 'only here');
      const file = m.fileOf(id);
      // Its only copy: refused without --force (test/ops/rm-unpushed-cli.test.ts), nothing written for it either way.
      expect(await m.run(['rm', id, '--json'])).toMatchObject({ code: 1 });
      const rm = await m.ok(['rm', id, '--force', '--json']);
      expect(rm).toMatchObject({ session: id, path: file, remote: false, deletedHere: false, lost: 1 });
      expect(existsSync(file)).toBe(false);
      expect(existsSync(join(m.home, 'sync'))).toBe(false); // nothing to record: it was never on a server
    } finally {
      dir.cleanup();
    }
  });

  it('a session pushed here, removed while logged out: still deleted here once logged in again', async () => {
    const a = new Machine(rig.root, 'away', { remote: remote('away') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'x', 'y');
    await a.ok(['sync', '--json']);
    await a.ok(['logout', '--json']);
    await a.ok(['rm', id, '--json']);
    await a.login(rig.server);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 0, createdSessions: 0, failed: 0 });
    expect(a.sessionFiles()).toEqual([]);
    expect((await a.ok(['status', '--json'])).sessions).toEqual([expect.objectContaining({ session: id, deletedHere: true })]);
  });

  it('a Claude Code session is not removed by rm (it removes pi sessions only): named, refused, its file untouched', async () => {
    const { a } = await claudePair(rig.root, 'RmCC', rig.server);
    const id = '77777777-3333-4444-8555-000000000001';
    const cwd = realpathSync(a.project);
    const path = a.write(`${id}.jsonl`, turn(id, cwd, null, 'one', ['abababab-0000-4000-8000-0000000000c1', 'abababab-0000-4000-8000-0000000000c2'], '2026-01-06T00:00:00.000Z'));
    await a.ok(['sync', '--json']);
    const r = await a.run(['rm', id.slice(0, 8), '--json']);
    expect(r.code).not.toBe(0);
    // The ref resolves (as list shows it) and rm says what to do instead, rather than "no session matches".
    const err = (JSON.parse(r.stderr.trim().split('\n').pop()!) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('bad_input');
    expect(err.message).toContain(`is a claude-code session (${path})`);
    expect(existsSync(path)).toBe(true);
  });
});
