// New session files' folder fsyncs in a pull, from the real process (strace): one per journal flush, never after a
// state that needs the file to be found is written down.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, tracedRun } from './kill-rig.js';
import { sessionsClaimed } from './traced-states.js';

/** What a trace shows of new files' names and the state written about them. */
interface FolderSyncs {
  /** Completed fsyncs of the project folder. */
  folderFsyncs: number;
  /** Completed fsyncs of the state journal. */
  journalFsyncs: number;
  /** Folder fsyncs between one journal fsync and the next (the first: before the first journal fsync). */
  between: number[];
  /** Sessions a state write named before a folder fsync begun after their file's link had completed. */
  uncovered: string[];
  /** Session files linked. */
  linked: number;
}

/**
 * Reads a `strace -f -y` trace of fsync, link and write calls. A call cut by another thread's (`<unfinished ...>`,
 * then `<... x resumed>`) starts at its first half and completes at its second (an fsync of the folder included: it
 * runs beside the fsyncs of new folders' parents, and is often cut). A folder fsync covers the links that
 * completed before it started; every write of a cursor file under `stateDir` that claims a session's file (see
 * sessionsClaimed) must come after its link is covered.
 */
function folderSyncs(trace: string, folder: string, stateDir: string, ids: readonly string[]): FolderSyncs {
  const out: FolderSyncs = { folderFsyncs: 0, journalFsyncs: 0, between: [0], uncovered: [], linked: 0 };
  const linkedAt = new Map<string, number>();
  /** Per thread, the call it has under way: what it is and when it began. */
  const open = new Map<string, { kind: 'folder' | 'journal' | 'link'; at: number; id?: string }>();
  let covered = -1; // every link completed before this point is durable
  const idIn = (line: string) => ids.find((id) => line.includes(`_${id}.jsonl"`));
  const lines = readFileSync(trace, 'utf8').split('\n');
  const done = (kind: 'folder' | 'journal' | 'link', began: number, at: number, id?: string) => {
    if (kind === 'folder') {
      out.folderFsyncs++;
      out.between[out.between.length - 1]!++;
      covered = Math.max(covered, began);
    } else if (kind === 'journal') {
      out.journalFsyncs++;
      out.between.push(0);
    } else if (id) {
      linkedAt.set(id, at);
      out.linked++;
    }
  };
  lines.forEach((line, at) => {
    const pid = line.split(' ', 1)[0]!;
    const resumed = /<\.\.\. (\w+) resumed>.*= (-?\d+)/.exec(line);
    if (resumed) {
      const call = open.get(pid);
      open.delete(pid);
      if (call && resumed[2] === '0') done(call.kind, call.at, at, call.id);
      return;
    }
    let kind: 'folder' | 'journal' | 'link' | null = null;
    if (new RegExp(`\\b(fsync|fdatasync)\\(\\d+<${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}>(\\)| <unfinished)`).test(line)) kind = 'folder';
    else if (/\b(fsync|fdatasync)\(\d+<[^>]*push-journal\.jsonl>/.test(line)) kind = 'journal';
    else if (/\blink(at)?\(/.test(line)) kind = 'link';
    else if (/\b(write|writev|pwrite64)\(\d+</.test(line) && line.includes(stateDir) && CURSOR_FILE.test(line)) {
      // A session's note of the pull request under way, written before its file is made, claims no file yet.
      for (const id of sessionsClaimed(line, ids)) {
        const l = linkedAt.get(id);
        if (l === undefined || l > covered) out.uncovered.push(id);
      }
      return;
    }
    if (!kind) return;
    const id = kind === 'link' ? idIn(line) : undefined;
    if (line.includes('<unfinished ...>')) open.set(pid, { kind, at, ...(id ? { id } : {}) });
    else if (/= 0$/.test(line.trim())) done(kind, at, at, id);
  });
  return out;
}

/** Where a session's cursor is written down: the journal, the pack (its temp file) or the session's own state file. */
const CURSOR_FILE = /\((\d+)<[^>]*(push-journal\.jsonl|state-pack\.jsonl[^/>]*|\/sessions\/[^/>]+\.json[^/>]*)>/;

const CALLS = 'fsync,fdatasync,link,linkat,write,writev,pwrite64';

describe.skipIf(!hasStrace())('folder fsyncs of the files a pull creates (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-folder-fsyncs-');

  it('a first pull of 40 sessions into one folder: at most one folder fsync per journal flush, each before the states it covers', async () => {
    const remote = 'git@github.com:acme/pull-folder-fsyncs.git';
    // Small batches: each session's 90 one-entry batches come in three pages, the pages of many sessions per request.
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'b', { remote });
    await a.login(rig.server);
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']); // the host id and the state folders, before the traced run
    const ids = Array.from({ length: 40 }, (_, n) => plantSession(a, n, 90));
    await a.ok(['push', '--all', '--json']);

    const trace = join(rig.root, 'pull.strace');
    const run = await tracedRun(b, ['pull', '--all'], trace, { calls: CALLS, strings: 1_000_000 });
    expect(run.code, run.err).toBe(0);
    expect((JSON.parse(run.out) as { createdSessions: number }).createdSessions).toBe(ids.length);

    const folder = dirname(b.fileOf(ids[0]!));
    const s = folderSyncs(trace, folder, join(b.home, 'sync') + '/', ids);
    console.log(`${s.linked} files linked; ${s.folderFsyncs} folder fsyncs, ${s.journalFsyncs} journal fsyncs; folder fsyncs between journal fsyncs: ${s.between.join(' ')}`);
    expect(s.linked, 'session files linked, seen in the trace').toBe(ids.length);
    expect(s.journalFsyncs, 'journal fsyncs seen in the trace').toBeGreaterThanOrEqual(2);
    // Before, each wave of new files made a folder fsync or two of its own (shared only by files linked meanwhile).
    expect(Math.max(...s.between), `folder fsyncs between journal fsyncs: ${s.between.join(' ')}`).toBeLessThanOrEqual(1);
    expect(s.folderFsyncs).toBeLessThanOrEqual(s.journalFsyncs + 1); // the last: at the journal's close
    // The guarantee: no cursor (journal, pack or own state file) is written before its file's name is durable.
    expect(s.uncovered, 'sessions whose state was written before their file could be found').toEqual([]);

    for (const id of ids.slice(0, 3)) expect(readLog(b.fileOf(id)).ids).toHaveLength(90);
    expect(((await b.ok(['pull', '--all', '--json'])) as { pulledEntries: number }).pulledEntries).toBe(0);
  }, 120_000);

  it('`resume <id>` of a session only on the server: its folder is fsynced before any state of it is written', async () => {
    const remote = 'git@github.com:acme/pull-folder-fsyncs-one.git';
    const a = new Machine(rig.root, 'c', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'd', { remote });
    await a.login(rig.server);
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    const id = plantSession(a, 77, 120); // three pages: the first makes the file, the others are appended
    await a.ok(['push', '--all', '--json']);

    const trace = join(rig.root, 'resume.strace');
    const run = await tracedRun(b, ['resume', id], trace, { calls: CALLS, strings: 1_000_000 });
    expect(run.code, run.err).toBe(0);
    const s = folderSyncs(trace, dirname(b.fileOf(id)), join(b.home, 'sync') + '/', [id]);
    console.log(`resume: ${s.folderFsyncs} folder fsyncs, ${s.journalFsyncs} journal fsyncs; between: ${s.between.join(' ')}`);
    expect(s.linked).toBe(1);
    expect(s.folderFsyncs).toBeGreaterThanOrEqual(1);
    expect(s.uncovered).toEqual([]);
    expect(readLog(b.fileOf(id)).ids).toHaveLength(120);
  }, 120_000);
});
