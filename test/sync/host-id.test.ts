// The host id: made once per SESSYNC_HOME, kept across runs and upgrades, renewed once in a copy with its state carried over.
import { cpSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from '../../cli/sync/sync-state.js';
import { newSessionState } from '../../cli/sync/session-sync-state.js';
import { useTempHome } from '../helpers/cli.js';

const box = useTempHome('sessync-host-', { beforeEach, afterEach });
const hostJson = (home: string) => JSON.parse(readFileSync(join(home, 'sync', 'host.json'), 'utf8'));

describe('SyncState.hostId', () => {
  it('is made once and kept, also when the folder is renamed', async () => {
    const home = join(box.dir, 'a');
    const id = await new SyncState(home, 'srv').hostId();
    expect(await new SyncState(home, 'srv').hostId()).toBe(id);
    const moved = join(box.dir, 'moved');
    renameSync(home, moved);
    expect(await new SyncState(moved, 'srv').hostId()).toBe(id);
  });

  it('a host.json from before folder marks keeps its id and gains a mark', async () => {
    const home = join(box.dir, 'old');
    const s = new SyncState(home, 'srv');
    await s.hostId();
    writeFileSync(join(home, 'sync', 'host.json'), JSON.stringify({ hostId: 'old-host', created: '2026-01-01T00:00:00.000Z' }));
    expect(await s.hostId()).toBe('old-host');
    expect(hostJson(home).folder).toEqual(expect.any(String));
    expect(await s.hostId()).toBe('old-host');
  });

  it('a copy gets a new id once; its session states count the old id as another host, already pulled', async () => {
    const home = join(box.dir, 'orig');
    const orig = new SyncState(home, 'srv');
    const oldId = await orig.hostId();
    await orig.save({ ...newSessionState('s1', '/p/s1.jsonl'), pushedOffset: 500, nextSeq: 4, cursor: { other: 7, [oldId]: 1e12 } });
    await orig.save({ ...newSessionState('s2', '/p/s2.jsonl'), pushedOffset: 90, nextSeq: 3, pending: { seq: 3, batchId: 'b', entryCount: 1, sha256: 'x', endOffset: 120 } });
    await orig.writePendingBody('s2', 3, '{"big":"body"}\n');

    const copyHome = join(box.dir, 'copy');
    cpSync(home, copyHome, { recursive: true });
    const copy = new SyncState(copyHome, 'srv');
    const notes: string[] = [];
    const newId = await copy.hostId((t) => notes.push(t));
    expect(newId).not.toBe(oldId);
    expect(hostJson(copyHome)).toMatchObject({ hostId: newId, copiedFrom: oldId });
    expect(notes.join('\n')).toMatch(/copy of another machine.*2 session state/);

    const s1 = (await copy.load('s1'))!;
    expect(s1).toMatchObject({ pushedOffset: 500, nextSeq: 1, cursor: { other: 7, [oldId]: 3 }, pending: null });
    const s2 = (await copy.load('s2'))!;
    expect(s2).toMatchObject({ pushedOffset: 90, nextSeq: 1, cursor: { [oldId]: 2 }, pending: null });
    expect(existsSync(copy.pendingBodyPath('s2', 3))).toBe(false);

    // Once only; and the original is untouched.
    expect(await copy.hostId()).toBe(newId);
    expect((await copy.load('s1'))!.nextSeq).toBe(1);
    expect(await orig.hostId()).toBe(oldId);
    expect((await orig.load('s1'))!.nextSeq).toBe(4);
    expect(existsSync(orig.pendingBodyPath('s2', 3))).toBe(true);
  });
});
