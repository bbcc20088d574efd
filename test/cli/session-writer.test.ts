// The store's writer on its own: a missing file is never created by an append; create never replaces a file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendEntries, createPulledFile, createSessionFile, fsyncDir } from '../../cli/store/session-writer.js';
import { peekTailState, readTailState, stateOfEntries } from '../../cli/store/tail-state.js';
import { serializeLine } from '../../shared/jsonl.js';
import fs, { mkdirSync } from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-writer-', { beforeEach, afterEach });

const header = { type: 'session' as const, version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' };
const entry = { type: 'message', id: 'e1', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'x' } };

describe('session writer', () => {
  it('appending to a missing file fails with not_found and creates nothing', async () => {
    const file = join(home.dir, 'missing.jsonl');
    await expect(appendEntries(file, [entry])).rejects.toMatchObject({ code: 'not_found' });
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('create refuses to replace an existing file; an old-format file is not appended to', async () => {
    const file = join(home.dir, 'p', 's.jsonl');
    await createSessionFile(file, header, [entry]);
    const bytes = readFileSync(file);
    await expect(createSessionFile(file, { ...header, id: 'other' })).rejects.toMatchObject({ code: 'conflict' });
    expect(readFileSync(file).equals(bytes)).toBe(true);
    const v1 = join(home.dir, 'v1.jsonl');
    writeFileSync(v1, JSON.stringify({ type: 'session', id: 'old', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/p' }) + '\n');
    await expect(appendEntries(v1, [entry])).rejects.toMatchObject({ code: 'unsupported_version' });
    expect(readFileSync(v1, 'utf8').split('\n')).toHaveLength(2);
  });

  it('folder fsyncs asked for while one runs share the next one; each caller\'s fsync starts after its call', async () => {
    const dir = join(home.dir, 'shared');
    mkdirSync(dir);
    const first = fsyncDir(dir);
    const rest = Array.from({ length: 9 }, () => fsyncDir(dir));
    // Under way when they came: they wait for one more, the same one for all of them.
    expect(new Set(rest).size).toBe(1);
    expect(rest[0]).not.toBe(first);
    await Promise.all([first, ...rest]);
    // Nothing under way any more: the next caller starts its own.
    const later = fsyncDir(dir);
    expect(later).not.toBe(rest[0]);
    await later;
  });

  it('new files\' fsyncs take turns: at most three in the thread pool at once, one of its four threads left for the state\'s', async () => {
    // fsync counted where the writer calls it (node:fs, whose ESM bindings follow the patched module).
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const original = fs.fsync;
    (fs as { fsync: unknown }).fsync = (fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      calls++;
      most = Math.max(most, ++inFlight);
      original(fd, (e) => {
        inFlight--;
        cb(e);
      });
    };
    syncBuiltinESMExports();
    try {
      await Promise.all(Array.from({ length: 40 }, (_, i) => createSessionFile(join(home.dir, 'turns', `s${i}.jsonl`), { ...header, id: `s${i}` }, [entry])));
    } finally {
      (fs as { fsync: unknown }).fsync = original;
      syncBuiltinESMExports();
    }
    expect(calls, 'one fsync per new file').toBe(40);
    expect(most).toBeLessThanOrEqual(3);
  });

  it('a created file\'s tail state, built from the entries written, is the one a parse of the file finds', async () => {
    const entries = [entry, { ...entry, id: 'e2', parentId: 'e1', timestamp: '2026-01-01T00:00:02.000Z' }, { ...entry, id: 'e3', parentId: 'e1', timestamp: '2026-01-01T00:00:03.000Z' }, { type: 'session_info', id: 'e4', parentId: 'e2', timestamp: '2026-01-01T00:00:04.000Z', name: 'named' }];
    const files = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const file = join(home.dir, 'many', `s${i}.jsonl`);
      const made = await createSessionFile(file, { ...header, id: `s${i}` }, entries as never);
      return { file, made };
    }));
    for (const { file, made } of files) expect(await peekTailState(file)).toEqual(JSON.parse(JSON.stringify(made)));
    rmSync(join(home.dir, 'home', 'cache'), { recursive: true, force: true }); // no cache: each parsed from its file
    for (const { file, made } of files) {
      expect(await peekTailState(file)).toBeNull();
      const parsed = await readTailState(file);
      expect({ ...parsed, tips: { ...parsed.tips } }).toEqual({ ...made, tips: { ...made.tips } });
      expect(made).toMatchObject({ leafId: 'e4', lastId: 'e4', entryCount: 4, messageCount: 3, name: 'named' });
    }
  });

  it('files created under new folders are reported made only once every new folder\'s name is fsynced in its parent, whoever made it', async () => {
    // What the writer does, in order: links (node:fs) and completed fsyncs of folders (node:fs/promises handles).
    const events: string[] = [];
    const top = join(home.dir, 'new');
    const dir = join(top, 'deeper', 'project');
    const link = fs.linkSync;
    const open = fsp.open;
    (fs as { linkSync: unknown }).linkSync = (a: string, b: string) => {
      link(a, b);
      events.push(`link ${b}`);
    };
    (fsp as { open: unknown }).open = async (path: string, ...rest: never[]) => {
      const fh = await open(path, ...rest);
      const sync = fh.sync.bind(fh);
      fh.sync = async () => {
        // The fsync of the folder that was there comes last: a file that does not wait for it is seen reported first.
        if (path === home.dir) await new Promise((r) => setTimeout(r, 50));
        await sync();
        events.push(`fsync ${path}`);
      };
      return fh;
    };
    syncBuiltinESMExports();
    try {
      await Promise.all(Array.from({ length: 6 }, async (_, i) => {
        const file = join(dir, `s${i}.jsonl`);
        await createSessionFile(file, { ...header, id: `s${i}` }, [entry]);
        events.push(`made ${file}`);
      }));
    } finally {
      (fs as { linkSync: unknown }).linkSync = link;
      (fsp as { open: unknown }).open = open;
      syncBuiltinESMExports();
    }
    // Each new folder's parent, and the folder that was there: one fsync each, not one per file.
    for (const d of [home.dir, top, join(top, 'deeper')]) {
      expect(events.filter((e) => e === `fsync ${d}`), `fsyncs of ${d}: ${events.join(', ')}`).toHaveLength(1);
    }
    const lastParentSync = Math.max(...[home.dir, top, join(top, 'deeper')].map((d) => events.indexOf(`fsync ${d}`)));
    const firstMade = events.findIndex((e) => e.startsWith('made '));
    expect(firstMade, events.join(', ')).toBeGreaterThan(lastParentSync);
    expect(events.filter((e) => e.startsWith('made '))).toHaveLength(6);
  });

  it('a pulled file under new folders hands only its own folder to the journal: the new folders\' parents are its own once-only fsyncs', async () => {
    const dir = join(home.dir, 'fresh', 'sessions', 'project');
    const taken: string[] = [];
    const defer = (d: string) => (taken.push(d), true);
    const line = Buffer.from(serializeLine(entry as never) + '\n');
    // Each new folder's parent fsynced at once, once per process (a parent that cannot be opened passed over, which a
    // journal's strict fsync could not do); the file is reported made after them (the test above).
    await createPulledFile(join(dir, 'a.jsonl'), header, { lines: [line], state: stateOfEntries([entry as never]) }, process.env, { deferFolderSync: defer });
    expect(taken).toEqual([dir]);
    // The folders are there now: the next file's only new name is in its own folder.
    taken.length = 0;
    await createPulledFile(join(dir, 'b.jsonl'), { ...header, id: 'b' }, { lines: [line], state: stateOfEntries([entry as never]) }, process.env, { deferFolderSync: defer });
    expect(taken).toEqual([dir]);
  });
});
