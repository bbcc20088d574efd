// A push's body taken from the file's bytes as they are, or joined when they are not one clean run (invalid UTF-8, a blank line, two values on a line): every entry arrives once.
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serializeLine } from '../../shared/jsonl.js';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { storedIds } from './kill-rig.js';

const entry = (id: string, parentId: string, content: string) => serializeLine({ type: 'message', id, parentId, timestamp: '2026-01-01T00:10:00.000Z', message: { role: 'user', content } });

describe('push body bytes', () => {
  const rig = useServer(startNodeServer, 'sessync-body-bytes-');

  it('sessions whose lines are one clean run, hold invalid UTF-8, a blank line or two values on a line: all pushed, none refused', async () => {
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/body-bytes.git' });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/body-bytes.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    const clean = plantSession(a, 0, 6);
    const bytes = plantSession(a, 1, 2);
    const path1 = a.fileOf(bytes);
    // A byte that is not UTF-8 inside a string: read (and sent) as U+FFFD, as every reader of the file sees it, and
    // reported as a line sent changed (test/sync/non-utf8-lines.test.ts checks the report itself).
    appendFileSync(path1, Buffer.concat([Buffer.from(entry('s1-x', 's1-e1', 'bad byte ').slice(0, -3)), Buffer.from([0xff]), Buffer.from('"}}\n')]));
    appendFileSync(path1, entry('s1-y', 's1-x', 'after') + '\n');
    const gaps = plantSession(a, 2, 2);
    appendFileSync(a.fileOf(gaps), '\n' + entry('s2-x', 's2-e1', 'after a blank line') + entry('s2-y', 's2-x', 'glued on') + '\n' + entry('s2-z', 's2-y', 'last') + '\n');

    const r = (await a.ok(['push', '--all', '--json'])) as { pushedEntries: number; skippedLines: number; failed: number };
    expect(r).toMatchObject({ failed: 0, skippedLines: 1, pushedEntries: 6 + 4 + 5 });
    const want = new Map([
      [clean, readLog(a.fileOf(clean)).ids],
      [bytes, readLog(a.fileOf(bytes)).ids],
      [gaps, ['s2-e0', 's2-e1', 's2-x', 's2-y', 's2-z']], // its glued line is two entries (readLog takes a line as one)
    ]);
    for (const [id, ids] of want) expect((await storedIds(rig.server, id)).sort()).toEqual([...ids].sort());
    await b.ok(['pull', '--all', '--json']);
    expect(readLog(b.fileOf(bytes)).entries.find((e) => e.id === 's1-x')?.message).toMatchObject({ content: 'bad byte \uFFFD' });
    expect(readLog(b.fileOf(gaps)).ids).toEqual(['s2-e0', 's2-e1', 's2-x', 's2-y', 's2-z']);
  }, 60_000);
});
