// The push journal of SyncState on real files: saves gathered and fsynced per flush, compaction into the pack, a killed run's journal replayed (torn last line, damaged line).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { SyncState } from '../../cli/sync/sync-state.js';
import { newSessionState } from '../../cli/sync/session-sync-state.js';

function state(): { st: SyncState; journal: string; file: (s: string) => string } {
  const d = tempDir('sessync-journal-');
  onTestFinished(() => d.cleanup());
  const st = new SyncState(d.dir, 'srv');
  return { st, journal: join(st.serverDir, 'push-journal.jsonl'), file: (s) => join(st.serverDir, 'sessions', `${s}.json`) };
}

const pending = { seq: 1, batchId: 'b1', entryCount: 2, sha256: 'h', endOffset: 90, fromFile: true as const };

describe('SyncState push journal', () => {
  it('gathers saves in memory, writes them with one fsync per flush, and compacts them into the pack', async () => {
    const { st, journal, file } = state();
    st.openJournal();
    for (const s of ['s1', 's2', 's3']) await st.save({ ...newSessionState(s, `/p/${s}.jsonl`), pending });
    expect(existsSync(file('s1'))).toBe(false); // nothing durable yet: no request has left
    expect((await st.load('s2'))?.pending?.batchId).toBe('b1'); // but the run sees its own saves
    await st.flushJournal();
    await st.flushJournal(); // nothing new: no write
    expect(st.journalFsyncs()).toBe(1);
    expect(readFileSync(journal, 'utf8').trim().split('\n')).toHaveLength(1 + 3); // its name, then the states
    await st.save({ ...newSessionState('s1', '/p/s1.jsonl'), pushedOffset: 90, nextSeq: 2 });
    await st.closeJournal();
    expect(existsSync(journal)).toBe(false);
    // One file for all of them, no file of their own; a reader of its own sees what the run saved last.
    expect(readFileSync(st.packPath(), 'utf8').trim().split('\n')).toHaveLength(1 + 3);
    for (const s of ['s1', 's2', 's3']) expect(existsSync(file(s))).toBe(false);
    const reader = new SyncState(join(st.dir, '..'), 'srv');
    expect(await reader.load('s1')).toMatchObject({ pushedOffset: 90, nextSeq: 2, pending: null });
    expect(await reader.load('s3')).toMatchObject({ pending: { batchId: 'b1' } });
  });

  it("a killed run's journal: read (not written) by a reader without the lock, replayed by recover; a torn last line is dropped", async () => {
    const { st, journal, file } = state();
    await st.save({ ...newSessionState('s1', '/p/s1.jsonl'), pushedOffset: 10, nextSeq: 2 }); // from an older run
    await st.save(newSessionState('gone', '/p/gone.jsonl'));
    st.openJournal();
    await st.save({ ...newSessionState('s1', '/p/s1.jsonl'), pushedOffset: 10, nextSeq: 2, pending: { ...pending, seq: 2 } });
    await st.save({ ...newSessionState('s2', '/p/s2.jsonl'), pending });
    await st.flushJournal();
    await st.forget('gone'); // durable at once
    // The kill: no compaction; a later append torn half-way (never fsynced, so its request never left).
    appendFileSync(journal, '{"state":{"session":"s2","path":"/p/s2.jsonl","pushedOff');

    const reader = new SyncState(join(st.dir, '..'), 'srv');
    const seen = await reader.all();
    expect(seen.get('s1')?.pending?.seq).toBe(2);
    expect(seen.get('s2')?.pending?.batchId).toBe('b1');
    expect(seen.has('gone')).toBe(false);
    expect(existsSync(journal)).toBe(true);
    expect(JSON.parse(readFileSync(file('s1'), 'utf8')).pending).toBeNull();

    await reader.recover();
    expect(existsSync(journal)).toBe(false);
    expect(existsSync(file('s1')), 'the older file of s1 is folded away').toBe(false);
    const after = new SyncState(join(st.dir, '..'), 'srv');
    expect((await after.load('s1'))?.pending).toMatchObject({ seq: 2 });
    expect((await after.load('s2'))?.pending).toMatchObject({ batchId: 'b1' });
    expect(await after.load('gone')).toBeNull();
    expect([...(await after.all()).keys()].sort()).toEqual(['s1', 's2']);
    expect(existsSync(file('gone'))).toBe(false);
  });

  it('a damaged line inside the journal is a clear error, and nothing is written over', async () => {
    const { st, journal, file } = state();
    await st.save({ ...newSessionState('s1', '/p/s1.jsonl'), pushedOffset: 10, nextSeq: 2 });
    appendFileSync(journal, '{"state":{"session":"s1","path":"/p/s1.jsonl","pushedOffset":99,"nextSeq":3,"cursor":{},"skipIds":[],"pending":null,"metaSent":true}}\nnot json\n{"forget":"s1"}\n');
    await expect(st.recover()).rejects.toMatchObject({ code: 'corrupt', message: expect.stringContaining('push-journal.jsonl') });
    expect(JSON.parse(readFileSync(file('s1'), 'utf8')).pushedOffset).toBe(10);
    expect(existsSync(journal)).toBe(true);
  });
});
