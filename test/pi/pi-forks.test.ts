// Forks in pi's session picker: pi nests a session under the one whose file its header `parentSession` names
// (both paths made canonical). sessync's fork writes that path, keeps the parent's id for itself, and a pull
// points the path at the parent's file on the machine it lands on.
import { describe, expect, it } from 'vitest';
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { SessionManager } from '@mariozechner/pi-coding-agent';
import { Machine, readLog, useServer } from '../sync/helpers.js';
import { jsonl, msg } from '../cli/cli-env.js';

const REMOTE = 'git@github.com:acme/pi-forks.git';

/** What pi's picker does with a listed session (session-selector.ts, buildSessionTree): its parent's file, if listed. */
async function parentInPicker(m: Machine, sessionsDir: string, id: string): Promise<string | undefined> {
  const listed = await SessionManager.list(realpathSync(m.project), projectFolder(sessionsDir, m));
  const byPath = new Map(listed.map((s) => [realpathSync(s.path), s]));
  const child = listed.find((s) => s.id === id);
  if (!child?.parentSessionPath) return undefined;
  let parent: string;
  try {
    parent = realpathSync(child.parentSessionPath);
  } catch {
    return undefined; // pi falls back to the raw string, which names no listed file
  }
  return byPath.get(parent)?.id;
}

function projectFolder(root: string, m: Machine): string {
  return `${root}/--${realpathSync(m.project).slice(1).replace(/\//g, '-')}--`;
}

describe('a sessync fork shows under its parent in pi', () => {
  const rig = useServer(undefined, 'sessync-pi-forks-');

  it('on the machine that forked, and on the other after sync; sessync keeps the parent id', async () => {
    const a = new Machine(rig.root, 'fa', { remote: REMOTE });
    const b = new Machine(rig.root, 'fb', { remote: 'https://github.com/acme/pi-forks' });
    await a.login(rig.server);
    await b.login(rig.server);
    const parent = await a.newSession();
    const { ids } = await a.ok(['append', parent, '--json'], jsonl([msg('user', 'one'), msg('assistant', 'two')]));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);

    const fork = await a.ok(['fork', parent, '--at', ids[0], '--json']);
    expect(fork).toMatchObject({ parentSession: a.fileOf(parent), parentSessionId: parent, parentEntry: ids[0] });
    const aRoot = `${a.home}/sessions`;
    expect(await parentInPicker(a, aRoot, fork.id)).toBe(parent);

    await a.ok(['sync', '--json']);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    const header = readLog(b.fileOf(fork.id)).header;
    expect(header).toMatchObject({ parentSession: b.fileOf(parent), parentSessionId: parent });
    expect(await parentInPicker(b, `${b.home}/sessions`, fork.id)).toBe(parent);

    // A fork pi itself made (its header names only the parent's file, whose name ends in the parent's id).
    const sm = SessionManager.open(a.fileOf(parent), dirname(a.fileOf(parent)));
    const piFork = sm.createBranchedSession(ids[1])!;
    const piForkId = sm.getSessionId();
    expect(readLog(piFork).header.parentSession).toBe(a.fileOf(parent));
    await a.ok(['sync', '--json']);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    expect(readLog(b.fileOf(piForkId)).header.parentSession).toBe(b.fileOf(parent));
    expect(await parentInPicker(b, `${b.home}/sessions`, piForkId)).toBe(parent);
  }, 120_000);
});
