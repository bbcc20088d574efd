// The state pack of SyncState on real files: own files newer than it win, forget reaches both, an old home reads as before, damage is reported, a kill after it is written resends nothing.
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { SyncState } from '../../cli/sync/sync-state.js';
import { newSessionState, type SessionSyncState } from '../../cli/sync/session-sync-state.js';
import { StatePack } from '../../cli/sync/state-pack.js';

function home(): { home: string; open: () => SyncState; file: (s: string) => string; own: () => string[] } {
  const d = tempDir('sessync-pack-');
  onTestFinished(() => d.cleanup());
  const open = () => new SyncState(d.dir, 'srv');
  const dir = join(open().serverDir, 'sessions');
  return { home: d.dir, open, file: (s) => join(dir, `${s}.json`), own: () => (existsSync(dir) ? readdirSync(dir).sort() : []) };
}

const at = (session: string, pushedOffset: number, more: Partial<SessionSyncState> = {}): SessionSyncState => ({ ...newSessionState(session, `/p/${session}.jsonl`), pushedOffset, nextSeq: 1 + pushedOffset / 10, ...more });

/** A many-session run: its saves journaled, compacted into the pack at its end. */
async function manyRun(st: SyncState, states: SessionSyncState[]): Promise<void> {
  st.openJournal();
  for (const s of states) await st.save(s);
  await st.flushJournal();
  await st.closeJournal();
}

const offsets = async (st: SyncState) => Object.fromEntries([...(await st.all())].map(([k, v]) => [k, v.pushedOffset]));

describe('SyncState pack', () => {
  it("a session's own file written after the pack wins over it; the next compaction folds it in and removes it", async () => {
    const h = home();
    await manyRun(h.open(), [at('s1', 10), at('s2', 20), at('s3', 30)]);
    expect(h.own()).toEqual([]);
    // A later single-session run: its state in the session's own file.
    await h.open().save(at('s1', 40));
    expect((await h.open().load('s1'))?.pushedOffset).toBe(40);
    expect(await offsets(h.open())).toEqual({ s1: 40, s2: 20, s3: 30 });
    // The next many-session run does not touch s1: its file is folded into the pack, then removed.
    await manyRun(h.open(), [at('s2', 50), at('s3', 60), at('s4', 70)]);
    expect(h.own()).toEqual([]);
    expect(await offsets(h.open())).toEqual({ s1: 40, s2: 50, s3: 60, s4: 70 });
    expect(readFileSync(h.open().packPath(), 'utf8').trim().split('\n')).toHaveLength(1 + 4);
  });

  it("a run's journal of one or two sessions goes to their own files: the other sessions' states are not rewritten", async () => {
    const h = home();
    await manyRun(h.open(), [at('s1', 10), at('s2', 20), at('s3', 30)]);
    const packed = readFileSync(h.open().packPath(), 'utf8');
    await manyRun(h.open(), [at('s1', 40), at('s4', 50)]);
    expect(readFileSync(h.open().packPath(), 'utf8')).toBe(packed);
    expect(h.own()).toEqual(['s1.json', 's4.json']);
    expect(await offsets(h.open())).toEqual({ s1: 40, s2: 20, s3: 30, s4: 50 });
  });

  it('forget removes a session wherever it is: the pack, its own file, both; with a journal open or not', async () => {
    const h = home();
    await manyRun(h.open(), [at('p1', 10), at('p2', 20), at('both', 30), at('kept', 40)]);
    await h.open().save(at('both', 50)); // newer, in its own file too
    await h.open().save(at('own', 60)); // in its own file only
    const packed = readFileSync(h.open().packPath(), 'utf8');
    for (const s of ['p1', 'both', 'own']) await h.open().forget(s);
    // One small write each, not a rewrite of every session's state.
    expect(readFileSync(h.open().packPath(), 'utf8')).toBe(packed);
    expect(await offsets(h.open())).toEqual({ p2: 20, kept: 40 });
    for (const s of ['p1', 'both', 'own']) expect(await h.open().load(s), s).toBeNull();
    // With a many-session run's journal open, then compacted: none of them comes back, and no mark is left.
    const st = h.open();
    st.openJournal();
    await st.forget('p2');
    expect(await st.load('p2')).toBeNull();
    await st.save(at('kept', 70));
    await st.save(at('new', 80));
    await st.closeJournal();
    expect(await offsets(h.open())).toEqual({ kept: 70, new: 80 });
    expect(h.own()).toEqual([]);
    expect(readFileSync(h.open().packPath(), 'utf8').trim().split('\n')).toHaveLength(1 + 2);
  });

  it('an old home (state files only, no pack) reads as before; its first compaction folds the files into a pack', async () => {
    const h = home();
    mkdirSync(join(h.open().serverDir, 'sessions'), { recursive: true });
    for (const [s, off] of [['o1', 10], ['o2', 20]] as const) writeFileSync(h.file(s), JSON.stringify(at(s, off)) + '\n');
    // An older sessync's journal of a killed run: no name line.
    writeFileSync(join(h.open().serverDir, 'push-journal.jsonl'), JSON.stringify({ state: at('o2', 25) }) + '\n');
    expect(await offsets(h.open())).toEqual({ o1: 10, o2: 25 });
    expect((await h.open().load('o1'))?.pushedOffset).toBe(10);
    expect(existsSync(h.open().packPath()), 'reading writes nothing').toBe(false);
    await h.open().recover(); // one session in the journal: to its own file, as an older sessync did
    expect(h.own()).toEqual(['o1.json', 'o2.json']);
    expect(await offsets(h.open())).toEqual({ o1: 10, o2: 25 });
    await manyRun(h.open(), [at('n1', 1), at('n2', 2), at('n3', 3)]);
    expect(h.own()).toEqual([]);
    expect(await offsets(h.open())).toEqual({ o1: 10, o2: 25, n1: 1, n2: 2, n3: 3 });
  });

  it('a pack of a newer format is a clear error, and nothing is written over it or the journal', async () => {
    const h = home();
    const st = h.open();
    mkdirSync(st.serverDir, { recursive: true });
    const newer = JSON.stringify({ sessyncStatePack: 2, journal: null, written: '2030-01-01T00:00:00Z' }) + '\n{"session":"s1","state":{"v2":true}}\n';
    writeFileSync(st.packPath(), newer);
    await expect(st.load('s1')).rejects.toMatchObject({ code: 'unsupported_version', message: expect.stringMatching(/state-pack\.jsonl is of format 2.*upgrade sessync/) });
    await expect(h.open().all()).rejects.toMatchObject({ code: 'unsupported_version' });
    const run = h.open();
    run.openJournal();
    for (const s of ['s2', 's3', 's4']) await run.save(at(s, 10));
    await run.flushJournal();
    await expect(run.closeJournal()).rejects.toMatchObject({ code: 'unsupported_version' });
    expect(readFileSync(st.packPath(), 'utf8')).toBe(newer);
    expect(existsSync(join(st.serverDir, 'push-journal.jsonl')), 'the journal keeps the run\'s states').toBe(true);
    await expect(h.open().recover()).rejects.toMatchObject({ code: 'unsupported_version' });
  });

  it('a damaged pack line is reported with its session, carried into the next pack until a newer state replaces it', async () => {
    const h = home();
    await manyRun(h.open(), [at('good', 10), at('hurt', 20), at('fine', 30), at('more', 40)]);
    const path = h.open().packPath();
    writeFileSync(path, readFileSync(path, 'utf8').replace('"session":"hurt","state":{"session":"hurt","path"', '"session":"hurt","state":{"session":"hurt",path'));
    expect((await h.open().load('good'))?.pushedOffset).toBe(10);
    const named = { code: 'corrupt', message: expect.stringMatching(/session hurt in .*state-pack\.jsonl \(line 3\) is damaged/) };
    await expect(h.open().load('hurt')).rejects.toMatchObject(named);
    await expect(h.open().all()).rejects.toMatchObject(named);
    // A run that does not touch it keeps the line as it is: never dropped, still reported.
    await manyRun(h.open(), [at('good', 50), at('fine', 51), at('more', 52)]);
    await expect(h.open().load('hurt')).rejects.toMatchObject({ code: 'corrupt' });
    expect((await h.open().load('good'))?.pushedOffset).toBe(50);
    expect(h.own()).toEqual([]);
    // A newer state of the session (its own file) stands over it, and the next compaction replaces the line.
    await h.open().save(at('hurt', 60));
    expect(await offsets(h.open())).toEqual({ good: 50, hurt: 60, fine: 51, more: 52 });
    await manyRun(h.open(), [at('good', 70), at('fine', 71), at('more', 72)]);
    expect(await offsets(h.open())).toEqual({ good: 70, hurt: 60, fine: 71, more: 72 });
    expect(h.own()).toEqual([]);
    // A line that does not even name its session: which load it would answer cannot be told, so none is.
    writeFileSync(path, readFileSync(path, 'utf8').replace('{"session":"fine"', '{"sessi'));
    await expect(h.open().load('good')).rejects.toMatchObject({ code: 'corrupt', message: expect.stringMatching(/line \d+ that names no session/) });
  });

  it('killed after the pack is written, before the journal and the older files are removed: recover keeps what the pack has', async () => {
    const h = home();
    await h.open().save(at('s1', 10)); // an older single-session run's file
    const st = h.open();
    st.openJournal();
    const batch = { seq: 2, batchId: 'b2', entryCount: 1, sha256: 'h', endOffset: 20, fromFile: true as const };
    await st.save(at('s1', 10, { pending: batch }));
    await st.save(at('s2', 0, { pending: { ...batch, seq: 1 } }));
    await st.save(at('s3', 0, { pending: { ...batch, seq: 1 } }));
    await st.flushJournal(); // the batches written down, then sent
    await st.save(at('s1', 20)); // acknowledged: in memory only until the compaction
    await st.save(at('s2', 10));
    await st.save(at('s3', 10));
    // What the kill leaves: the journal and s1's older file, beside the pack already durable.
    const journal = join(st.serverDir, 'push-journal.jsonl');
    copyFileSync(journal, journal + '.kept');
    copyFileSync(h.file('s1'), h.file('s1') + '.kept');
    await st.closeJournal();
    copyFileSync(journal + '.kept', journal);
    copyFileSync(h.file('s1') + '.kept', h.file('s1'));
    const next = h.open();
    await next.recover();
    // The acknowledgements stand: nothing is pending, so nothing is sent again.
    expect((await next.load('s1'))?.pending).toBeNull();
    expect(await offsets(h.open())).toEqual({ s1: 20, s2: 10, s3: 10 });
    expect(h.own().filter((n) => !n.endsWith('.kept'))).toEqual([]);
    expect(existsSync(journal)).toBe(false);
  });

  it("a copied home carries every session's state over to its new host id, from the pack and from own files alike", async () => {
    const h = home();
    const oldHost = await h.open().hostId();
    await manyRun(h.open(), [at('s1', 10), at('s2', 20), at('s3', 30, { pending: { seq: 4, batchId: 'b4', entryCount: 1, sha256: 'h', endOffset: 40, fromFile: true } })]);
    await h.open().save(at('s4', 40)); // a single-session run's file
    const copy = tempDir('sessync-pack-copy-');
    onTestFinished(() => copy.cleanup());
    cpSync(h.home, copy.dir, { recursive: true });
    const notes: string[] = [];
    const newHost = await new SyncState(copy.dir, 'srv').hostId((t) => notes.push(t));
    expect(newHost).not.toBe(oldHost);
    expect(notes.join('\n')).toContain('4 session state(s) carried over');
    const carried = await new SyncState(copy.dir, 'srv').all();
    for (const [s, next] of [['s1', 2], ['s2', 3], ['s3', 4], ['s4', 5]] as const) {
      expect(carried.get(s), s).toMatchObject({ nextSeq: 1, pending: null, cursor: { [oldHost]: next - 1 } });
    }
    expect(readdirSync(join(copy.dir, 'sync', 'servers', 'srv', 'sessions')), 'folded into the pack').toEqual([]);
    expect(await offsets(h.open()), 'the original is left as it was').toEqual({ s1: 10, s2: 20, s3: 30, s4: 40 });
  });

  it('a run reads the pack once, however many sessions it loads; recover reads it again', async () => {
    const h = home();
    const many = Array.from({ length: 50 }, (_, n) => at(`s${n}`, 10 * n));
    await manyRun(h.open(), many);
    const read = vi.spyOn(StatePack, 'read'); // a spy: the real read runs, its calls are counted
    onTestFinished(() => read.mockRestore());
    const st = h.open();
    for (const s of many) expect((await st.load(s.session))?.pushedOffset).toBe(s.pushedOffset);
    expect(await st.load('none')).toBeNull();
    expect(read).toHaveBeenCalledTimes(1);
    await st.recover();
    await st.load('s1');
    expect(read).toHaveBeenCalledTimes(2);
  });
});
