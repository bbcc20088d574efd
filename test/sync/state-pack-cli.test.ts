// The state pack through the real CLI: a many-session run leaves one pack, `rm` forgets a session held there, a damaged line stops the run naming its session.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, plantSession, readLog, startNodeServer, useServer } from './helpers.js';

const SESSIONS = 4;
const ENTRIES = 6;
const REMOTE = 'git@github.com:acme/state-pack-cli.git';

describe('the state pack, through the CLI', () => {
  const rig = useServer(startNodeServer, 'sessync-pack-cli-');

  it('rm of a session whose state is in the pack forgets it (pulled again it comes whole); a damaged line is reported with its session', async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));
    await a.ok(['push', '--all', '--json']);
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ createdSessions: SESSIONS, failed: 0 });
    const pack = join(b.serverState(), 'state-pack.jsonl');
    expect(existsSync(pack)).toBe(true);
    const own = join(b.serverState(), 'sessions');
    expect(existsSync(own) ? readdirSync(own) : []).toEqual([]);

    // rm of the local copy: its state, a line of the pack, stays (deleted here: pull leaves it), and restore starts
    // that line over, pulling the whole session again.
    await b.ok(['rm', ids[0]!, '--json']);
    expect(await b.syncState(ids[0]!)).not.toBeNull();
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ createdSessions: 0, pulledEntries: 0, failed: 0 });
    expect((await b.ok(['restore', ids[0]!, '--json'])).restored).toMatchObject([{ session: ids[0], pulled: { entries: ENTRIES } }]);
    expect(entrySet(b.fileOf(ids[0]!))).toEqual(entrySet(a.fileOf(ids[0]!)));

    // A damaged line: the run stops with the session named, and writes nothing over the pack.
    const text = readFileSync(pack, 'utf8');
    const hurt = text.split('\n').findIndex((l) => l.startsWith(`{"session":"${ids[1]}"`));
    expect(hurt).toBeGreaterThan(0);
    const damaged = text.split('\n').map((l, i) => (i === hurt ? l.slice(0, -20) : l)).join('\n');
    writeFileSync(pack, damaged);
    const r = await b.run(['sync', '--all', '--json']);
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toContain(`sync state of session ${ids[1]} in`);
    expect(r.stderr + r.stdout).toContain(`(line ${hurt + 1}) is damaged; delete that line`);
    expect(readFileSync(pack, 'utf8')).toBe(damaged);
    // Doing as the message says rebuilds that session's state: nothing is appended twice, nothing lost.
    writeFileSync(pack, damaged.split('\n').filter((_, i) => i !== hurt).join('\n'));
    expect(await b.ok(['sync', '--all', '--json'])).toMatchObject({ failed: 0 });
    for (const id of ids) {
      const got = readLog(b.fileOf(id)).ids;
      expect(new Set(got).size, `session ${id}: an entry twice`).toBe(got.length);
      expect(entrySet(b.fileOf(id))).toEqual(entrySet(a.fileOf(id)));
    }
    expect(await a.ok(['sync', '--all', '--json'])).toMatchObject({ failed: 0, pulledEntries: 0 });
  }, 90_000);
});
