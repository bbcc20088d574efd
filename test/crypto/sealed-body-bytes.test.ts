// An encrypted push seals the file's bytes as they are when they are one clean run, else the lines joined (invalid
// UTF-8, a blank line, two values on a line): every entry arrives once, as every reader of the file sees it.
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serializeLine } from '../../shared/jsonl.js';
import { plantSession, readLog, startNodeServer, useServer } from '../sync/helpers.js';
import { encryptedPair } from './crypto-rig.js';

const entry = (id: string, parentId: string, content: string) => serializeLine({ type: 'message', id, parentId, timestamp: '2026-01-01T00:10:00.000Z', message: { role: 'user', content } });

describe('sealed push body bytes', () => {
  const rig = useServer(startNodeServer, 'sessync-sealed-bytes-');

  it('clean runs, invalid UTF-8, a blank line and two values on a line: all sealed and pushed, the other machine opens the same entries', async () => {
    const { a, b } = await encryptedPair(rig.root, rig.server);
    const clean = plantSession(a, 0, 6);
    const bytes = plantSession(a, 1, 2);
    // A byte that is not UTF-8 inside a string: read (and sealed) as U+FFFD.
    appendFileSync(a.fileOf(bytes), Buffer.concat([Buffer.from(entry('s1-x', 's1-e1', 'bad byte ').slice(0, -3)), Buffer.from([0xff]), Buffer.from('"}}\n')]));
    appendFileSync(a.fileOf(bytes), entry('s1-y', 's1-x', 'after') + '\n');
    const gaps = plantSession(a, 2, 2);
    appendFileSync(a.fileOf(gaps), '\n' + entry('s2-x', 's2-e1', 'after a blank line') + entry('s2-y', 's2-x', 'glued on') + '\n' + entry('s2-z', 's2-y', 'last') + '\n');

    // The line with the bad byte is sent (sealed) as its U+FFFD text and reported as changed: one skipped-lines note.
    expect(await a.ok(['push', '--all', '--json'])).toMatchObject({ failed: 0, skippedLines: 1, pushedEntries: 6 + 4 + 5 });
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ failed: 0, createdSessions: 3, pulledEntries: 6 + 4 + 5 });
    expect(readLog(b.fileOf(clean)).entries).toEqual(readLog(a.fileOf(clean)).entries);
    expect(readLog(b.fileOf(bytes)).entries.find((e) => e.id === 's1-x')?.message).toMatchObject({ content: 'bad byte \uFFFD' });
    expect(readLog(b.fileOf(bytes)).ids).toEqual(['s1-e0', 's1-e1', 's1-x', 's1-y']);
    expect(readLog(b.fileOf(gaps)).ids).toEqual(['s2-e0', 's2-e1', 's2-x', 's2-y', 's2-z']);
  }, 60_000);
});
