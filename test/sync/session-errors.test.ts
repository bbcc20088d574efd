// One session's trouble (its file locked by a live writer) is reported for that session; the others still sync.
import { writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/Locks.git';

describe('per-session errors', () => {
  const rig = useServer(undefined, 'sessync-serr-');

  it('a session locked by a live process fails alone: exit 1, the other session is pulled and pushed', async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: REMOTE, env: { SESSYNC_LOCK_TIMEOUT_MS: '300' } });
    await a.login(rig.server);
    await b.login(rig.server);
    const locked = await a.newSession();
    const free = await a.newSession();
    await a.say(locked, 'l1');
    await a.say(free, 'f1');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    await a.say(locked, 'l2');
    await a.say(free, 'f2');
    await a.ok(['sync', '--json']);
    await b.say(free, 'from b');

    // A live holder (this test process) of the lock of b's copy of `locked`, in file-lock's format.
    const lock = `${b.fileOf(locked)}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
    try {
      const r = await b.run(['sync', '--json']);
      expect(r.code, r.stderr).toBe(1);
      const s = r.json();
      expect(s.failed).toBe(1);
      expect(s.sessions.find((x: { session: string }) => x.session === locked).error.code).toBe('locked');
      // Pushed: b's entry, then the checkout marker that keeps pi's leaf on it after f2 was pulled behind it.
      expect(s.sessions.find((x: { session: string }) => x.session === free)).toMatchObject({ pushed: { entries: 2 }, pulled: { entries: 1 } });
      const freeLog = readLog(b.fileOf(free)).entries;
      expect(freeLog.filter((e) => e.type === 'message').map((e) => (e.message as { content: string }).content).sort()).toEqual(['f1', 'f2', 'from b']);
      expect(freeLog.at(-1)).toMatchObject({ type: 'custom', customType: 'sessync.checkout' });
    } finally {
      rmSync(lock, { force: true });
    }
    expect(await b.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 1, failed: 0 });
    expect(readLog(b.fileOf(locked)).entries).toHaveLength(2);
  }, 90_000);

  it('an unreadable session file of the project is reported by sync, not passed over silently', async () => {
    const a = new Machine(rig.root, 'u', { remote: REMOTE });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'fine');
    const broken = join(dirname(a.fileOf(id)), '2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000000.jsonl');
    writeFileSync(broken, 'not a header\n');
    const s = await a.ok(['sync', '--json']);
    expect(s).toMatchObject({ pushedEntries: 1, failed: 0 });
    expect(s.skippedFiles.map((f: { path: string }) => f.path)).toEqual([broken]);
    const text = await a.ok(['push']);
    expect(text).toContain('1 unreadable session file skipped');
  }, 60_000);
});
