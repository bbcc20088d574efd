// A first push reads each session file once (header, batch and leaf check from one read) and reads no state file the
// run knows is not there; a branched file still has its leaves checked, and gets its marker when they differ.
import { readFileSync, realpathSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { serializeLine } from '../../shared/jsonl.js';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, tracedRun } from './kill-rig.js';

const REMOTE = 'git@github.com:acme/first-read.git';

/** A pi-written session of root r and two children: `last` is the child on the last line, `newer` the later-stamped one. */
function plantBranched(m: Machine, n: number, lastIsNewest: boolean): { id: string; path: string } {
  const id = `${n.toString().padStart(8, '0')}-0000-4000-8000-0000000000aa`;
  const timestamp = new Date(Date.UTC(2026, 0, 2, 0, n)).toISOString();
  const cwd = realpathSync(m.project);
  const dir = projectDir(join(m.home, 'sessions'), cwd);
  const path = join(dir, sessionFileName(timestamp, id));
  const at = (s: number) => new Date(Date.UTC(2026, 0, 2, 1, n, s)).toISOString();
  const msg = (eid: string, parentId: string | null, s: number) => ({ type: 'message', id: eid, parentId, timestamp: at(s), message: { role: 'user', content: `${eid} of ${n}` } });
  const lines = [
    { type: 'session', version: 3, id, timestamp, cwd },
    msg(`b${n}-root`, null, 0),
    msg(`b${n}-one`, `b${n}-root`, lastIsNewest ? 1 : 2),
    msg(`b${n}-two`, `b${n}-root`, lastIsNewest ? 2 : 1), // the last line: pi's leaf
  ];
  mkdirSync(dir, { recursive: true });
  writeFileSync(path, lines.map((l) => serializeLine(l) + '\n').join(''));
  return { id, path };
}

/** openat calls of the trace, as `path flags` pairs (strace -y prints the path the call opened). */
function opens(trace: string): { path: string; flags: string }[] {
  const out: { path: string; flags: string }[] = [];
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const m = /openat\(AT_FDCWD[^,]*, "([^"]+)", ([A-Z_|]+)/.exec(line);
    if (m) out.push({ path: m[1]!, flags: m[2]! });
  }
  return out;
}

describe.skipIf(!hasStrace())('a first push reads each file once (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-first-read-');

  it('chains: one open of each file, no lock, no state file read, the file unchanged; branches: a marker only where the leaves differ', async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    await a.login(rig.server);
    await a.ok(['push', '--all', '--json']); // the host id and state folders, before the traced run
    const chains = Array.from({ length: 4 }, (_, n) => plantSession(a, n, 6));
    const agreeing = plantBranched(a, 10, true);
    const marked = plantBranched(a, 11, false);
    const before = new Map([...chains.map((id) => a.fileOf(id)), agreeing.path, marked.path].map((p) => [p, readFileSync(p, 'utf8')]));

    const trace = join(rig.root, 'first-push.strace');
    const run = await tracedRun(a, ['push', '--all'], trace, { calls: 'openat', strings: 4096 });
    expect(run.code, run.err).toBe(0);
    const summary = JSON.parse(run.out) as { pushedSessions: number; pushedEntries: number; failed: number };
    expect(summary).toMatchObject({ pushedSessions: 6, failed: 0, pushedEntries: 4 * 6 + 3 + 3 + 1 });

    const opened = opens(trace);
    const opensOf = (p: string) => opened.filter((o) => o.path === p).length;
    for (const path of chains.map((id) => a.fileOf(id))) {
      // One open for the listing (header and last entry), one for the push: nothing else reads the file.
      expect(opensOf(path), `opens of ${path}`).toBeLessThanOrEqual(2);
      expect(opened.filter((o) => o.path === `${path}.lock`), `lock of ${path}`).toHaveLength(0);
    }
    // The branch whose last line is its newest tip: looked at under the lock, and left as it was, as the chains are.
    for (const path of [...chains.map((id) => a.fileOf(id)), agreeing.path]) expect(readFileSync(path, 'utf8'), `no marker in ${path}`).toBe(before.get(path));
    // No state file is read for a session the run knows has none (they are all new here).
    const stateReads = opened.filter((o) => /\/sessions\/[^/]+\.json$/.test(o.path) && o.path.includes('/sync/servers/') && !o.flags.includes('O_CREAT'));
    expect(stateReads.map((o) => o.path)).toEqual([]);

    // The branch whose last line is not its newest tip: the marker under pi's leaf (the last line), pushed with it.
    const log = readLog(marked.path).entries;
    expect(log).toHaveLength(4);
    expect(log.at(-1)).toMatchObject({ type: 'custom', customType: 'sessync.checkout', parentId: 'b11-two' });
    expect(opened.filter((o) => o.path === `${marked.path}.lock`).length).toBeGreaterThan(0);

    // All of it on the server once: another machine pulls the same files (marker included), and nothing is left to push.
    expect(((await a.ok(['push', '--all', '--json'])) as { pushedEntries: number }).pushedEntries).toBe(0);
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    await b.login(rig.server);
    const pulled = (await b.ok(['pull', '--all', '--json'])) as { pulledEntries: number; failed: number };
    expect(pulled).toMatchObject({ pulledEntries: summary.pushedEntries, failed: 0 });
    expect(readLog(b.fileOf(marked.id)).ids).toEqual(readLog(marked.path).ids);
  }, 120_000);

  it('a single-session first push of a disagreeing branch appends the marker and pushes it', async () => {
    const a = new Machine(rig.root, 'c', { remote: REMOTE });
    await a.login(rig.server);
    const { id, path } = plantBranched(a, 12, false);
    const r = (await a.ok(['push', id, '--json'])) as { pushedEntries: number };
    expect(r.pushedEntries).toBe(4);
    expect(readLog(path).entries.at(-1)).toMatchObject({ type: 'custom', customType: 'sessync.checkout', parentId: 'b12-two' });
  }, 60_000);
});
