// pi's lines travel byte-exact: a line pi wrote with \u escapes, spaces or its own key order lands on the other
// machine with the very same bytes, whether the pull creates the file or appends to it.
import { appendFileSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pairWithSession, useServer } from '../sync/helpers.js';

const REMOTES: [string, string] = ['git@github.com:acme/pi-bytes.git', 'https://github.com/acme/pi-bytes'];

/** The entry lines of a session file (its header, which is per machine, left out). */
const entryLines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(1).filter((l) => l !== '');

/** Lines as another writer (pi) may write them: escapes JSON.stringify would not make, spaces, other key order. */
function oddLines(parent: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `b7e5${n}${i}`.padEnd(8, '0');
    const at = `2026-01-0${n}T00:00:0${i}.000Z`;
    out.push(
      i % 2 === 0
        ? `{"type":"message","id":"${id}","parentId":"${parent}","timestamp":"${at}","message":{"role":"user","content":"caf\\u00e9 \\u2014 \\ud83d\\ude00 \\/ok"}}`
        : `{"message": {"content": "spaced \\u0041", "role": "user"}, "timestamp": "${at}", "parentId": "${parent}", "id": "${id}", "type": "message"}`,
    );
    parent = id;
  }
  return out;
}

describe('pi sync is byte-exact', () => {
  const rig = useServer(undefined, 'sessync-pi-bytes-');

  it('a pulled pi line has the bytes it was written with, on a new file and appended to one', async () => {
    const { a, b, id } = await pairWithSession(rig.root, ['a', 'b'], REMOTES, rig.server, 'first');
    const aFile = a.fileOf(id);
    const first = entryLines(aFile).at(-1)!;
    const firstId = (JSON.parse(first) as { id: string }).id;
    const batch1 = oddLines(firstId, 4);
    appendFileSync(aFile, batch1.map((l) => `${l}\n`).join(''));
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    expect(entryLines(b.fileOf(id))).toEqual(entryLines(aFile));

    // Appended to an existing file: the same.
    const batch2 = oddLines((JSON.parse(batch1.at(-1)!) as { id: string }).id, 3);
    appendFileSync(aFile, batch2.map((l) => `${l}\n`).join(''));
    await a.ok(['sync', '--json']);
    expect(await b.ok(['pull', '--json'])).toMatchObject({ pulledEntries: 3, failed: 0 });
    const onB = entryLines(b.fileOf(id));
    for (const l of [...batch1, ...batch2]) expect(onB).toContain(l);
    expect(onB).toEqual(entryLines(aFile));
  });
});
