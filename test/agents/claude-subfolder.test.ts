// A Claude Code session made in a subfolder of its repository, pulled by real sessync processes: it lands in Claude
// Code's folder for that subfolder of the local project. A header (made by hand here, as a hostile server or share
// could send it) whose cwdInProject is not a plain subfolder (.git/hooks, backslashes) lands at the project's top.
import { mkdirSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { useServer } from '../sync/helpers.js';
import { claudePair, turn } from './claude-rig.js';
import { editMirrorHeader, mirrorHeader } from './mirror-header.js';

const IN_SUB = '51515151-3333-4444-8555-666666666666';
const GIT_HOOKS = '52525252-3333-4444-8555-666666666666';
const BACKSLASH = '53535353-3333-4444-8555-666666666666';

describe('Claude Code sessions of a subfolder of the project (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-ccsub-');

  it('land in that subfolder of the pulling machine\'s project; a cwdInProject that is not a plain subfolder lands at its top', async () => {
    const { a, b } = await claudePair(rig.root, 'Sub', rig.server);
    const aTop = realpathSync(a.project);
    mkdirSync(join(a.project, 'pkg', 'web'), { recursive: true });
    // B has the subfolder, and folders an unchecked cwdInProject would be followed into (git init made .git/hooks).
    for (const d of ['pkg/web', 'x\\..\\..']) mkdirSync(join(b.project, d), { recursive: true });
    const bTop = realpathSync(b.project);

    // Made in A's pkg/web, so Claude Code files it under that folder's name; A's mirror header records cwdInProject.
    const aSub = join(aTop, 'pkg', 'web');
    a.write(`${IN_SUB}.jsonl`, turn(IN_SUB, aSub, null, 'in pkg/web', ['5a5a5a5a-0000-4000-8000-000000000001', '5a5a5a5a-0000-4000-8000-000000000002'], '2026-01-09T00:00:00.000Z'), join(a.claudeDir, 'projects', claudeProjectFolder(aSub)));
    a.write(`${GIT_HOOKS}.jsonl`, turn(GIT_HOOKS, aTop, null, 'hooks', ['5b5b5b5b-0000-4000-8000-000000000001', '5b5b5b5b-0000-4000-8000-000000000002'], '2026-01-09T00:01:00.000Z'));
    a.write(`${BACKSLASH}.jsonl`, turn(BACKSLASH, aTop, null, 'backslash', ['5c5c5c5c-0000-4000-8000-000000000001', '5c5c5c5c-0000-4000-8000-000000000002'], '2026-01-09T00:02:00.000Z'));
    await a.ok(['list', '--all', '--json']); // mirrors them, nothing pushed yet
    expect(mirrorHeader(a.home, 'claude-code', IN_SUB)).toMatchObject({ cwdInProject: 'pkg/web' });
    editMirrorHeader(a.home, 'claude-code', GIT_HOOKS, { cwdInProject: '.git/hooks' });
    editMirrorHeader(a.home, 'claude-code', BACKSLASH, { cwdInProject: 'x\\..\\..' });
    expect(await a.ok(['sync', '--all', '--json'])).toMatchObject({ failed: 0, pushedEntries: 9 });

    // B syncs from its project's top: each session is pulled (never an error), into the folder its header allows.
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 3 });
    const projects = join(b.claudeDir, 'projects');
    // Seen failing on old code: the .git/hooks session was filed in Claude Code's folder for B's .git/hooks.
    expect(readdirSync(projects).sort()).toEqual([claudeProjectFolder(bTop), claudeProjectFolder(join(bTop, 'pkg', 'web'))].sort());
    expect(readdirSync(join(projects, claudeProjectFolder(join(bTop, 'pkg', 'web'))))).toEqual([`${IN_SUB}.jsonl`]);
    expect(readdirSync(join(projects, claudeProjectFolder(bTop))).sort()).toEqual([`${GIT_HOOKS}.jsonl`, `${BACKSLASH}.jsonl`].sort());
  });
});
