// list's summary cache: rows are trusted only while size and mtime match, files added or removed anywhere are seen, a damaged or old cache is rebuilt.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listSessions } from '../../cli/store/session-index.js';
import { cacheDir, cacheKey, projectDir, sessionFileName } from '../../cli/store/paths.js';
import { useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-index-', { beforeEach, afterEach });
const CWD = '/projects/project';
const root = () => join(home.dir, 'home', 'sessions');
const pdir = () => projectDir(root(), CWD);
const cacheFile = () => join(cacheDir('list'), `${cacheKey(pdir())}.json`);
const list = async () => (await listSessions({ root: root(), realCwd: CWD })).map((r) => r.id).sort();

function session(second: number, id: string, extra = ''): string {
  mkdirSync(pdir(), { recursive: true });
  const path = join(pdir(), sessionFileName(new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(), id));
  writeFileSync(path, JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: CWD }) + '\n' + extra);
  return path;
}

describe('list summary cache', () => {
  it('a warm list gives the same rows and leaves the cache file alone', async () => {
    for (let i = 0; i < 20; i++) session(i, `id-${String(i).padStart(2, '0')}`);
    const cold = await listSessions({ root: root(), realCwd: CWD });
    const saved = readFileSync(cacheFile(), 'utf8');
    const before = statSync(cacheFile()).mtimeMs;
    await new Promise((r) => setTimeout(r, 15));
    expect(await listSessions({ root: root(), realCwd: CWD })).toEqual(cold);
    expect(statSync(cacheFile()).mtimeMs).toBe(before);
    expect(readFileSync(cacheFile(), 'utf8')).toBe(saved);
  });

  it('a file whose size or mtime changed is read again (same name, new header)', async () => {
    const path = session(1, 'first');
    session(2, 'other');
    expect(await list()).toEqual(['first', 'other']);
    writeFileSync(path, JSON.stringify({ type: 'session', version: 3, id: 'replaced-id', timestamp: '2026-01-01T00:00:00.000Z', cwd: CWD }) + '\n');
    expect(await list()).toEqual(['other', 'replaced-id']);
    // Same size, only the mtime moves: still re-read.
    writeFileSync(path, JSON.stringify({ type: 'session', version: 3, id: 'replaced-ix', timestamp: '2026-01-01T00:00:00.000Z', cwd: CWD }) + '\n');
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    expect(await list()).toEqual(['other', 'replaced-ix']);
  });

  it('files added before, between and after the cached ones, and removed ones, are all seen', async () => {
    // Equal sizes and mtimes everywhere: only the file name can tell a cached row from its neighbour's.
    const same = new Date('2026-02-01T00:00:00Z');
    const touch = (p: string) => (utimesSync(p, same, same), p);
    for (const s of [10, 20, 30]) touch(session(s, `mid-${s}`));
    expect(await list()).toEqual(['mid-10', 'mid-20', 'mid-30']);
    touch(session(5, 'new-0005'));
    touch(session(25, 'new-0025'));
    touch(session(40, 'new-0040'));
    rmSync(session(20, 'mid-20'));
    expect(await list()).toEqual(['mid-10', 'mid-30', 'new-0005', 'new-0025', 'new-0040']);
    const cachedNames = () => (JSON.parse(readFileSync(cacheFile(), 'utf8')).rows as [string][]).map((r) => r[0]);
    expect(cachedNames().filter((n) => n.includes('mid-20'))).toEqual([]); // the removed file left the cache
    expect(cachedNames()).toHaveLength(5);
    // Only a removal, nothing new or changed: the cache still forgets the file.
    rmSync(join(pdir(), sessionFileName(new Date(Date.UTC(2026, 0, 1, 0, 0, 30)).toISOString(), 'mid-30')));
    expect(await list()).toEqual(['mid-10', 'new-0005', 'new-0025', 'new-0040']);
    expect(cachedNames()).toHaveLength(4);
  });

  it('a damaged cache, or one of an older format, is rebuilt rather than trusted', async () => {
    session(1, 'a');
    session(2, 'b');
    await list();
    mkdirSync(cacheDir('list'), { recursive: true });
    writeFileSync(cacheFile(), '{"format":3,"dir":');
    expect(await list()).toEqual(['a', 'b']);
    // Format 2 keyed rows by file name; its rows (here with a wrong id) must not be used.
    const names = JSON.parse(readFileSync(cacheFile(), 'utf8')).rows.map((r: string[]) => r[0]);
    const old = { format: 2, dir: pdir(), files: Object.fromEntries(names.map((n: string) => [n, [0, 0, 'stale', CWD, 't', null, null]])) };
    writeFileSync(cacheFile(), JSON.stringify(old));
    expect(await list()).toEqual(['a', 'b']);
    // Rows that are not arrays are dropped, not thrown on.
    writeFileSync(cacheFile(), JSON.stringify({ format: 3, dir: pdir(), rows: [null, 5, ['x']] }));
    expect(await list()).toEqual(['a', 'b']);
  });

  it('a folder named like a session file is not listed', async () => {
    session(1, 'real');
    mkdirSync(join(pdir(), sessionFileName('2026-01-01T00:00:09.000Z', 'folder')));
    expect(await list()).toEqual(['real']);
  });
});
