// Lines lost locally after they were synced (a torn last line, a file cut short) come back from the server on the next
// sync, merged by id: nothing doubled, and the next entry continues from the right leaf, on both machines.
import { readFileSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Machine, useServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/Heal.git';

/** The file's entries that parse (a torn or cut line is passed over), in file order. */
function entries(path: string): { id: string; parentId: string | null; type: string; content?: unknown }[] {
  const out: { id: string; parentId: string | null; type: string; content?: unknown }[] = [];
  for (const l of readFileSync(path, 'utf8').split('\n').slice(1)) {
    if (l.trim() === '') continue;
    let e: { id: string; parentId: string | null; type: string; message?: { content?: unknown } };
    try {
      e = JSON.parse(l);
    } catch {
      continue;
    }
    out.push({ id: e.id, parentId: e.parentId, type: e.type, content: e.message?.content });
  }
  return out;
}

const contents = (path: string) => entries(path).filter((e) => e.type === 'message').map((e) => e.content);

function noDoubles(path: string): void {
  const ids = entries(path).map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
}

describe('lines lost here after a sync are healed from the server (pi)', () => {
  const rig = useServer(undefined, 'sessync-heal-');

  it('a torn last line: the next sync appends the server copy of that entry once, and the next entry is its child on both machines', async () => {
    const a = new Machine(rig.root, 'torn-a', { remote: REMOTE });
    const b = new Machine(rig.root, 'torn-b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'msg 1', 'msg 2', 'msg 3');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 3, failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 3, createdSessions: 1 });
    const file = a.fileOf(id);
    const third = entries(file).at(-1)!;
    expect(third.content).toBe('msg 3');

    truncateSync(file, statSync(file).size - 20); // msg 3's line torn
    expect(contents(file)).toEqual(['msg 1', 'msg 2']);
    const healed = await a.ok(['sync', '--json']);
    expect(healed).toMatchObject({ failed: 0 });
    expect(contents(file)).toEqual(['msg 1', 'msg 2', 'msg 3']);
    noDoubles(file);
    expect(entries(file).filter((e) => e.id === third.id)).toHaveLength(1);

    // pi's leaf (and sessync's) is msg 3 again: the next entry is its child, not its sibling.
    await a.say(id, 'msg 4');
    const fourth = entries(file).at(-1)!;
    expect(fourth.content).toBe('msg 4');
    expect(fourth.parentId).toBe(third.id);
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const bFile = b.fileOf(id);
    noDoubles(bFile);
    expect(contents(bFile)).toEqual(['msg 1', 'msg 2', 'msg 3', 'msg 4']);
    expect(entries(bFile).find((e) => e.content === 'msg 4')!.parentId).toBe(third.id);
    // Settled: nothing more goes either way.
    for (const m of [a, b]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
    noDoubles(file);
  }, 120_000);

  it('lines pulled from the other machine and then cut here come back; status shows them waiting until then', async () => {
    const a = new Machine(rig.root, 'cut-a', { remote: REMOTE });
    const b = new Machine(rig.root, 'cut-b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two', 'three', 'four');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const bFile = b.fileOf(id);
    expect(contents(bFile)).toEqual(['one', 'two', 'three', 'four']);

    // Another program keeps only the header and the first two entries (whole lines).
    const lines = readFileSync(bFile, 'utf8').split('\n');
    writeFileSync(bFile, lines.slice(0, 3).join('\n') + '\n');
    expect(contents(bFile)).toEqual(['one', 'two']);
    await b.ok(['push', '--json']); // notices the cut; the pull side is reset too
    const status = await b.ok(['status', '--json']);
    expect(status.toPull).toBe(1);
    expect(await b.ok(['pull', '--json'])).toMatchObject({ pulledEntries: 2, failed: 0 });
    expect(contents(bFile)).toEqual(['one', 'two', 'three', 'four']);
    noDoubles(bFile);
    for (const m of [b, a, b]) await m.ok(['sync', '--json']);
    expect(contents(a.fileOf(id))).toEqual(['one', 'two', 'three', 'four']);
    noDoubles(a.fileOf(id));
    noDoubles(bFile);
  }, 120_000);
  it('a file cut short and then only pulled (no push first): the pull brings the lost entries back', async () => {
    const a = new Machine(rig.root, 'pull-a', { remote: REMOTE });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'first', 'second', 'third');
    await a.ok(['push', '--json']);
    const file = a.fileOf(id);
    truncateSync(file, statSync(file).size - 20);
    expect(await a.ok(['pull', id, '--json'])).toMatchObject({ pulledEntries: 1, failed: 0 });
    expect(contents(file)).toEqual(['first', 'second', 'third']);
    noDoubles(file);
    await a.ok(['sync', '--json']);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
    noDoubles(file);
  }, 120_000);
});

describe('lines lost here after a sync are healed on an end-to-end encrypted account', () => {
  const rig = useServer(undefined, 'sessync-heal-e2e-');

  it('a torn last line: the sealed batches, this machine\'s own among them, are opened and the lost entry comes back once', async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    const login = await a.login(rig.server, { encrypt: true });
    expect(login).toMatchObject({ encrypted: true });
    await b.login(rig.server, { encrypt: true });
    await b.ok(['key', 'import', '--json'], login.key as string);
    const id = await a.newSession();
    await a.say(id, 'sealed 1', 'sealed 2', 'sealed 3');
    await a.ok(['sync', '--json']);
    const file = a.fileOf(id);
    const third = entries(file).at(-1)!;
    truncateSync(file, statSync(file).size - 20);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(contents(file)).toEqual(['sealed 1', 'sealed 2', 'sealed 3']);
    noDoubles(file);
    await a.say(id, 'sealed 4');
    expect(entries(file).at(-1)!.parentId).toBe(third.id);
    await a.ok(['sync', '--json']);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    expect(contents(b.fileOf(id))).toEqual(['sealed 1', 'sealed 2', 'sealed 3', 'sealed 4']);
    noDoubles(b.fileOf(id));
  }, 120_000);
});
