// The pull hint for a folder whose project has nothing on the server: the key the user needs comes first (named like
// this folder, else a path: key, a project without git being the one a mapping is for), and a few keys are all named.
// Real parts: a real `sessync serve` and the real CLI; the note's text for many keys from its own function.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeOtherProjects, otherProjectsNote } from '../../cli/sync/other-projects.js';
import { Machine, plantSession, readLog, useServer } from './helpers.js';

describe('the hint of a pull that finds none of this project on the server', () => {
  const rig = useServer(undefined, 'sessync-others-hint-');

  it('names the path: key of the folder of the same name first, every key when few, and its --map advice works', async () => {
    // Machine A: four git projects with more sessions each than the one without git, `notes`.
    const a = new Machine(rig.root, 'a', { project: join(rig.root, 'a', 'work', 'notes') });
    await a.login(rig.server);
    let n = 1;
    for (const name of ['api', 'web', 'cli', 'docs']) {
      const p = new Machine(rig.root, 'a', { remote: `https://example.test/team/${name}.git`, project: join(rig.root, 'a', 'src', name) });
      for (let i = 0; i < 2; i++) plantSession(p, n++, 1, { pad: 10 });
    }
    const id = plantSession(a, n++, 2, { pad: 10 });
    expect(await a.ok(['push', '--all', '--agent', 'pi', '--json'])).toMatchObject({ failed: 0, pushedSessions: 9 });

    // Machine B: the same notes folder at another path, no git.
    const b = new Machine(rig.root, 'b', { project: join(rig.root, 'b', 'home', 'notes') });
    await b.login(rig.server);
    const r = await b.run(['pull', '--agent', 'pi']);
    expect(r.code, r.stderr).toBe(0);
    const key = `path:${a.project}`;
    const first = /of other projects: (.*)\.\n/.exec(r.stderr)?.[1];
    expect(first?.split(', ')).toEqual([`${key} (1)`, 'example.test/team/api (2)', 'example.test/team/cli (2)', 'example.test/team/docs (2)', 'example.test/team/web (2)']);
    expect(r.stderr).not.toContain('more project(s)');
    expect(r.stderr).toContain(`\`sessync pull --map ${key}=${b.project}\``);
    expect((await b.ok(['pull', '--agent', 'pi', '--json'])).otherProjects.keys[0]).toEqual({ key, sessions: 1 });

    const advice = /`sessync pull (--map \S+)`/.exec(r.stderr)![1]!.split(' ');
    expect(await b.ok(['pull', '--agent', 'pi', ...advice, '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: 2 });
    expect(readLog(b.fileOf(id)).header.cwd).toBe(b.project);
  }, 120_000);

  it('many keys: the first three, and how many more, with where the rest are listed', () => {
    const keys = Array.from({ length: 8 }, (_, i) => ({ key: `example.test/p${i}`, sessions: 8 - i }));
    const x = { projectKey: 'path:/here/notes', folder: '/here/notes', thisProject: 0, sessions: 36, keys };
    const note = otherProjectsNote(x, 'sync')!;
    expect(note.split('\n')[0]).toBe('sync: the server has no session of this project (key path:/here/notes), and 36 session(s) of other projects: example.test/p0 (8), example.test/p1 (7), example.test/p2 (6), and 5 more project(s) (`sessync sync --json` lists them under otherProjects).');
    const capped = otherProjectsNote({ ...x, keys: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, sessions: 1 })) }, 'pull')!;
    expect(capped).toContain(', and at least 17 more project(s)');
  });
  it('a folder with git (a renamed repository): the big git project comes first and is the --map advice, not scratch path: keys', () => {
    const scratch = Array.from({ length: 25 }, (_, i) => ({ key: `path:/tmp/scratch${i}`, sessions: 1 }));
    const x = mergeOtherProjects([{ projectKey: 'github.com/me/app2', folder: '/src/app2', thisProject: 0, sessions: 325, keys: [...scratch, { key: 'github.com/me/app', sessions: 300 }] }])!;
    expect(x.keys[0]).toEqual({ key: 'github.com/me/app', sessions: 300 });
    expect(x.keys).toHaveLength(20);
    const note = otherProjectsNote(x, 'pull')!;
    expect(note).toContain('`sessync pull --map github.com/me/app=/src/app2`');
    expect(note).toContain('lists the first 20 under otherProjects');
  });

  it('a folder without git: path: keys first, yet the project of most sessions is still listed, and the advice is it', () => {
    const paths = Array.from({ length: 25 }, (_, i) => ({ key: `path:/tmp/scratch${i}`, sessions: 1 }));
    const x = mergeOtherProjects([{ projectKey: 'path:/here/notes', folder: '/here/notes', thisProject: 0, sessions: 325, keys: [{ key: 'github.com/me/big', sessions: 300 }, ...paths] }])!;
    expect(x.keys[0]!.key.startsWith('path:')).toBe(true);
    expect(x.keys).toContainEqual({ key: 'github.com/me/big', sessions: 300 });
    expect(otherProjectsNote(x, 'pull')).toContain('--map github.com/me/big=/here/notes');
  });
});
