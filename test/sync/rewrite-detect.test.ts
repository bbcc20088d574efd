// A file rewritten in place below the pushed offset (same length, the byte before the offset still a newline) is
// noticed by the hash of the bytes before the offset, and pushed again: the other machine gets the new entry.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/Rewrite.git';

describe('rewrite detection', () => {
  const rig = useServer(undefined, 'sessync-rw-');

  it('an id changed in place just before the pushed offset makes the next push send the file again', async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'first');
    const file = a.fileOf(id);
    const parentId = readLog(file).ids.at(-1);
    // Written by another tool, with the id last on the line (so it sits in the bytes just before the offset).
    appendFileSync(file, JSON.stringify({ type: 'message', parentId, timestamp: new Date().toISOString(), message: { role: 'user', content: 'second' }, id: 'keep-0002' }) + '\n');
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 2 });

    writeFileSync(file, readFileSync(file, 'utf8').replace('"keep-0002"', '"edit-0002"'));
    await a.say(id, 'third');
    const r = await a.ok(['push', '--json']);
    expect(r.pushedEntries).toBe(3); // the whole file again, not only the new entry
    await b.ok(['pull', '--json']);
    const ids = readLog(b.fileOf(id)).ids;
    expect(ids).toContain('edit-0002');
    expect(ids).toHaveLength(4); // first, keep-0002 (already on the server), edit-0002, third
  }, 60_000);
});
