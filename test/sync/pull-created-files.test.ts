// Files a first pull creates besides the session files, counted from the real process (strace): one new file per
// pulled session, no cache file per session; `list` then answers from the one list cache the pull left per folder.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, tracedRun } from './kill-rig.js';
import { PULLED_TAIL_CACHE_MIN_BYTES } from '../../cli/store/session-writer.js';

const SESSIONS = 20;
const ENTRIES = 30;

/**
 * Paths a traced run opened with O_CREAT or passed to mkdir, each once (an open retried after its folder was made names
 * the same path; a call cut in two by another thread's, `<unfinished ...>`, is counted by its first half).
 */
function createdPaths(trace: string): string[] {
  const out = new Set<string>();
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const m = /\bopenat\(AT_FDCWD(?:<[^>]*>)?, "([^"]+)", [^)]*O_CREAT/.exec(line) ?? /\bmkdir\("([^"]+)"/.exec(line);
    if (m) out.add(m[1]!);
  }
  return [...out];
}

function cacheFiles(home: string, kind: string): string[] {
  const dir = join(home, 'cache', kind);
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe.skipIf(!hasStrace())('what a first pull creates (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-created-');

  it(`a first pull of ${SESSIONS} sessions creates one file per session outside the sync state, and list answers without opening them`, async () => {
    const remote = 'git@github.com:acme/pull-created.git';
    const a = new Machine(rig.root, 'a', { remote });
    const b = new Machine(rig.root, 'b', { remote });
    await a.login(rig.server);
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']); // the host id and the state folders, before the traced run
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));
    await a.ok(['push', '--all', '--json']);

    const trace = join(rig.root, 'pull.strace');
    const run = await tracedRun(b, ['pull', '--all'], trace, { calls: 'openat,mkdir,rename,link', strings: 300 });
    expect(run.code, run.err).toBe(0);
    expect((JSON.parse(run.out) as { createdSessions: number }).createdSessions).toBe(SESSIONS);

    // Under the home, outside the sync state (cursors: another part's business): the session files' temp files, the
    // project folder, the list cache (and its folder), the run's lock. Before, every session had a tail cache too.
    const created = createdPaths(trace).filter((p) => p.startsWith(b.home + '/') && !p.startsWith(join(b.home, 'sync') + '/'));
    const sessionTemps = created.filter((p) => /\/\.[^/]+\.jsonl\.\d+\.[a-z0-9]+\.tmp$/.test(p));
    expect(sessionTemps, 'one temp file per session file').toHaveLength(SESSIONS);
    const others = created.filter((p) => !sessionTemps.includes(p));
    expect(others.length, `files and folders created besides the session files: ${others.join(', ')}`).toBeLessThanOrEqual(6);
    expect(cacheFiles(b.home, 'tail'), 'no tail cache per small pulled file').toEqual([]);
    expect(cacheFiles(b.home, 'list'), 'one list cache for the one project folder').toHaveLength(1);

    // list: every session with its message count, from that cache alone (no session file opened).
    const listed = join(rig.root, 'list.strace');
    const l = await tracedRun(b, ['list'], listed, { calls: 'openat', strings: 300 });
    expect(l.code, l.err).toBe(0);
    const rows = JSON.parse(l.out) as { id: string; messageCount?: number }[];
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    for (const r of rows) expect(r.messageCount, `messages of ${r.id}`).toBe(ENTRIES);
    const opened = readFileSync(listed, 'utf8').split('\n').filter((x) => /\.jsonl"/.test(x));
    expect(opened, 'session files list opened').toEqual([]);

    // The files are whole and appendable: the first append rebuilds the state from the file and chains on the last entry.
    await b.say(ids[0]!, 'after the pull');
    const log = readLog(b.fileOf(ids[0]!));
    expect(log.ids).toHaveLength(ENTRIES + 1);
    expect(log.entries[ENTRIES]!.parentId).toBe(`s0-e${ENTRIES - 1}`);
    expect(cacheFiles(b.home, 'tail'), 'the append left the tail cache of its file').toHaveLength(1);
  }, 120_000);
});

describe('tail caches a pull still writes', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-tail-kept-');

  it('a session pulled in several pages, and one larger than the threshold, keep their tail cache; list counts all', async () => {
    const remote = 'git@github.com:acme/pull-tail-kept.git';
    // Small batches: session 0's 90 one-entry batches come in three pages (the later two appended to the new file).
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const big = new Machine(rig.root, 'c', { remote });
    const b = new Machine(rig.root, 'b', { remote });
    await a.login(rig.server);
    await big.login(rig.server);
    await b.login(rig.server);
    const paged = plantSession(a, 0, 90);
    await a.ok(['push', '--all', '--json']);
    const pad = Math.ceil(PULLED_TAIL_CACHE_MIN_BYTES / 40);
    const large = plantSession(big, 1, 41, { pad });
    const small = plantSession(big, 2, 5);
    await big.ok(['push', '--all', '--json']);

    const r = (await b.ok(['pull', '--all', '--json'])) as { createdSessions: number };
    expect(r.createdSessions).toBe(3);
    // The paged session's and the large one's; the small one has none (its first append rebuilds it).
    expect(cacheFiles(b.home, 'tail')).toHaveLength(2);
    const rows = (await b.ok(['list', '--json'])) as { id: string; messageCount?: number }[];
    const count = new Map(rows.map((x) => [x.id, x.messageCount]));
    expect(count.get(paged)).toBe(90);
    expect(count.get(large)).toBe(41);
    expect(count.get(small)).toBe(5);
  }, 120_000);
});
