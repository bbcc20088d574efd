// A pull in a folder whose project has nothing on the server, while the account holds other projects' sessions (the
// usual second machine with a non-git project at another path): it says so, names the keys and how to take them,
// and following its --map advice brings the session. Real parts: a real `sessync serve` and the real CLI.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

describe('pull names the sessions of other projects when this one has none on the server', () => {
  const rig = useServer(undefined, 'sessync-others-');

  it('non-git project at another path: the note, the --json figures, and its --map advice taken', async () => {
    const a = new Machine(rig.root, 'a', { project: join(rig.root, 'a', 'x', 'proj') });
    const b = new Machine(rig.root, 'b', { project: join(rig.root, 'b', 'x', 'projB') });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'made on machine A');
    await a.ok(['push', '--json']);
    const aKey = `path:${a.project}`;

    const r = await b.run(['pull']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pull: 0 sessions checked; pulled 0 entries into 0 sessions; \d+ requests?\n$/);
    expect(r.stderr).toContain(`pull: the server has no session of this project (key path:${b.project}), and 1 session(s) of other projects: ${aKey} (1).`);
    expect(r.stderr).toContain(`\`sessync pull --map ${aKey}=${b.project}\``);
    expect(r.stderr).toContain('`sessync project`');
    expect(r.stderr).toContain('`sessync pull --all`');
    expect(b.sessionFiles()).toEqual([]);

    const j = await b.ok(['pull', '--json']);
    expect(j.otherProjects).toEqual({ projectKey: `path:${b.project}`, folder: b.project, thisProject: 0, sessions: 1, keys: [{ key: aKey, sessions: 1 }] });
    // Several agents' runs see the same server: the session is counted once (for the agent it belongs to).
    const every = await b.ok(['pull', '--agent', 'all', '--json']);
    expect(every.otherProjects).toMatchObject({ sessions: 1, keys: [{ key: aKey, sessions: 1 }] });
    expect((await b.run(['sync'])).stderr).toContain(`sync: the server has no session of this project (key path:${b.project})`);

    // The advice, as printed, works: the session lands here, and the mapping is remembered.
    const advice = /`sessync pull (--map \S+)`/.exec(r.stderr)![1]!.split(' ');
    expect(await b.ok(['pull', ...advice, '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: 1 });
    expect(readLog(b.fileOf(id)).header.cwd).toBe(b.project);

    // With this project's sessions on the server, the others are not announced on every run (--json still counts them).
    const c = new Machine(rig.root, 'c', { project: join(rig.root, 'c', 'other') });
    await c.login(rig.server);
    await c.say(await c.newSession(), 'a third project');
    await c.ok(['push', '--json']);
    const again = await b.run(['pull']);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('other projects');
    expect((await b.ok(['pull', '--json'])).otherProjects).toMatchObject({ thisProject: 1, sessions: 1, keys: [{ key: `path:${c.project}`, sessions: 1 }] });
  });
});
