// Projects without git: `pull --map path:/old=/new` works without --all, and `sessync project` shows the key and how it was found.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

describe('projects without git', () => {
  const rig = useServer(undefined, 'sessync-nogit-');

  it('pull --map path:OLD=NEW (no --all) brings the sessions of OLD into NEW, and later pulls remember it', async () => {
    const a = new Machine(rig.root, 'a', { project: join(rig.root, 'a', 'work', 'notes') });
    const b = new Machine(rig.root, 'b', { project: join(rig.root, 'b', 'elsewhere', 'notes') });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'from the laptop');
    await a.ok(['push', '--json']);

    // The keys differ (path keys): without a mapping, this folder has no sessions on the server.
    const none = await b.ok(['pull', '--json']);
    expect(none.pulledEntries).toBe(0);
    expect(b.sessionFiles()).toEqual([]);

    const mapped = await b.ok(['pull', '--map', `path:${a.project}=${b.project}`, '--json']);
    expect(mapped).toMatchObject({ pulledEntries: 1, createdSessions: 1 });
    const file = b.fileOf(id);
    expect(readLog(file).header.cwd).toBe(b.project);

    // Remembered: the next entry from A comes with a plain pull, and status counts the session as this folder's.
    await a.say(id, 'second');
    await a.ok(['push', '--json']);
    const st = await b.ok(['status', '--json']);
    expect(st.sessions).toEqual([expect.objectContaining({ session: id, waitingBatches: 1 })]);
    expect((await b.ok(['pull', '--json'])).pulledEntries).toBe(1);
    expect(readLog(file).ids).toHaveLength(2);

    // A second session of A's project, new to B: found by the saved mapping, no --map and no --all.
    const id2 = await a.newSession();
    await a.say(id2, 'another');
    await a.ok(['push', '--json']);
    expect((await b.ok(['sync', '--json'])).createdSessions).toBe(1);
    expect(readLog(b.fileOf(id2)).header.cwd).toBe(b.project);

    // sessync project on B: its own path key, how it was found, and A's key mapped here.
    const p = await b.ok(['project', '--json']);
    expect(p).toMatchObject({ folder: b.project, key: `path:${b.project}`, source: 'path', mappedHere: [`path:${a.project}`] });
    const human = await b.ok(['project']);
    expect(human).toContain(`key       path:${b.project}`);
    expect(human).toContain(`also here path:${a.project}`);
  }, 120_000);

  it('sessync project names a git remote key and a root-commit key, with how each was found; it has help', async () => {
    const g = new Machine(rig.root, 'g', { remote: 'git@github.com:Acme/App.git' });
    expect(await g.ok(['project', '--json'])).toMatchObject({ key: 'github.com/Acme/App', source: 'git-remote', detail: 'git remote "origin" is git@github.com:Acme/App.git', mappedTo: null });
    const r = new Machine(rig.root, 'r');
    execFileSync('git', ['init', '-q', r.project]);
    execFileSync('git', ['-C', r.project, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'first']);
    const root = execFileSync('git', ['-C', r.project, 'rev-list', '--max-parents=0', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(await r.ok(['project', '--json'])).toMatchObject({ key: `git-root:${root}`, source: 'git-root' });
    const help = await r.ok(['project', '--help']);
    expect(help).toMatch(/^Usage: sessync project/);
    expect(help).toContain('--map KEY=PATH');
    // Local only: no login needed.
    expect((await r.run(['project'])).code).toBe(0);
  }, 60_000);
});
