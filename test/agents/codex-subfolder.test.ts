// A Codex session made in a subfolder of its repository, pulled by real sessync processes: it is filed under that
// subfolder of the local project. A header (made by hand here, as a hostile server could send it) whose cwdInProject is
// not a plain subfolder (.git/hooks, backslashes) is filed at the project's top, by the same guard as Claude Code's.
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { codexPair, msg, startRollout } from './codex-rig.js';
import { editMirrorHeader, mirrorHeader } from './mirror-header.js';

const IN_SUB = '01a2c0de-0000-7000-8000-000000000001';
const GIT_HOOKS = '01a2c0de-0000-7000-8000-000000000002';
const BACKSLASH = '01a2c0de-0000-7000-8000-000000000003';

describe('Codex sessions of a subfolder of the project (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-cxsub-');

  it('are filed under that subfolder of the pulling machine\'s project; a cwdInProject that is not a plain subfolder, at its top', async () => {
    const { a, b } = await codexPair(rig.root, 'CxSub', rig.server);
    const aTop = realpathSync(a.project);
    mkdirSync(join(aTop, 'pkg', 'web'), { recursive: true });
    // B has the subfolder, and folders an unchecked cwdInProject would be followed into (git init made .git/hooks).
    for (const d of ['pkg/web', 'x\\..\\..']) mkdirSync(join(b.project, d), { recursive: true });
    const bTop = realpathSync(b.project);

    // Made in A's pkg/web (its session_meta's cwd); A's mirror header records cwdInProject.
    const sub = startRollout(a, IN_SUB, msg('in pkg/web', '2026-01-01T00:00:01.000Z'));
    writeFileSync(sub, readFileSync(sub, 'utf8').replace(JSON.stringify(a.project), JSON.stringify(join(aTop, 'pkg', 'web'))));
    startRollout(a, GIT_HOOKS, msg('hooks', '2026-01-01T00:00:02.000Z'));
    startRollout(a, BACKSLASH, msg('backslash', '2026-01-01T00:00:03.000Z'));
    await a.ok(['list', '--all', '--json']); // mirrors them, nothing pushed yet
    // Seen failing on old code: no cwdInProject in a Codex mirror's header.
    expect(mirrorHeader(a.home, 'codex', IN_SUB)).toMatchObject({ cwd: join(aTop, 'pkg', 'web'), cwdInProject: 'pkg/web' });
    expect(mirrorHeader(a.home, 'codex', GIT_HOOKS).cwdInProject).toBeUndefined();
    editMirrorHeader(a.home, 'codex', GIT_HOOKS, { cwdInProject: '.git/hooks' });
    editMirrorHeader(a.home, 'codex', BACKSLASH, { cwdInProject: 'x\\..\\..' });
    expect(await a.ok(['sync', '--all', '--json'])).toMatchObject({ failed: 0, pushedEntries: 6 });

    // B syncs from its project's top: each session is pulled (never an error), filed where its header allows.
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 3 });
    expect(mirrorHeader(b.home, 'codex', IN_SUB).cwd).toBe(join(bTop, 'pkg', 'web'));
    expect(mirrorHeader(b.home, 'codex', GIT_HOOKS).cwd).toBe(bTop);
    expect(mirrorHeader(b.home, 'codex', BACKSLASH).cwd).toBe(bTop);
    // The rollouts are Codex's, byte for byte: the subfolder is a fact of this machine's mirror only.
    for (const s of [IN_SUB, GIT_HOOKS, BACKSLASH]) expect(b.text(s)).toBe(a.text(s));
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, pushedEntries: 0, pulledEntries: 0 });
  });
});
