// A line holding two entries (two writers raced) is pushed as two lines: the other machine gets both, whole.
import { describe, expect, it } from 'vitest';
import { appendFileSync } from 'node:fs';
import { pairWithSession, readLog, useServer } from './helpers.js';

const REMOTE = 'git@github.com:acme/split-lines.git';

describe('a damaged line holding two entries', () => {
  const rig = useServer(undefined, 'sessync-split-');

  it('reaches the other machine as two entries, each on its own line; both machines resume the same', async () => {
    const { a, b, id } = await pairWithSession(rig.root, ['a', 'b'], [REMOTE, REMOTE], rig.server, 'first');
    const first = readLog(a.fileOf(id)).ids[0]!;
    const e = (eid: string, parentId: string, s: number) =>
      JSON.stringify({ type: 'message', id: eid, parentId, timestamp: new Date(Date.now() + s * 1000).toISOString(), message: { role: 'user', content: eid } });
    appendFileSync(a.fileOf(id), e('glued001', first, 1) + e('glued002', 'glued001', 2) + '\n');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 3, skippedLines: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: 3 });
    const onB = readLog(b.fileOf(id));
    expect(onB.ids).toEqual([first, 'glued001', 'glued002']);
    expect((await b.run(['doctor', id])).code).toBe(0); // whole there: one entry per line
    expect(await b.ok(['context', id, '--json'])).toEqual(await a.ok(['context', id, '--json']));
  });
});
