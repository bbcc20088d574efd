// What a sync of one small project asks of the server while the account holds many sessions of other projects: the
// project keys of those sessions (their metas) come in shared requests, so the count follows pages, not sessions.
// Real parts: a real `sessync serve`, the real CLI, its own request count (`requests` in --json).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { LIMITS } from '../../shared/wire.js';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { TEST_ADMIN_SECRET, adminCreateAccount, appFetcher } from '../worker/routes-helpers.js';
import { Machine, plantSession, tempDir, useServer } from './helpers.js';
import { writeSession } from './session-files.js';

const APP = 'https://example.test/team/app.git';
const OTHER = 'https://example.test/team/other.git';
/** Sessions of the other project: several metas' pages (LIMITS.maxSessionsPerPull a page). */
const OTHERS = 150;
const MINE = 8;

/** Requests a run may make besides the metas' pages: the changes feed, the account's key record, the pulls, slack. */
const FIXED = 6;

describe('sync of a small project while the account holds many sessions of another', () => {
  const rig = useServer(undefined, 'sessync-sync-requests-');

  it('a fresh machine, then new sessions of the other project: requests bounded by pages, not by sessions', async () => {
    const a = new Machine(rig.root, 'a', { remote: APP });
    const aOther = new Machine(rig.root, 'a', { remote: OTHER, project: join(rig.root, 'a', 'src', 'other') });
    await a.login(rig.server);
    for (let n = 1; n <= MINE; n++) plantSession(a, n, 3, { pad: 10 });
    for (let n = 0; n < OTHERS; n++) plantSession(aOther, 1000 + n, 1, { pad: 10 });
    expect(await a.ok(['push', '--all', '--agent', 'pi', '--json'])).toMatchObject({ failed: 0, pushedSessions: MINE + OTHERS });

    // A fresh machine with the same project: its first sync takes this project's sessions, and learns the others'
    // project keys without one request per session of the account.
    const c = new Machine(rig.root, 'c', { remote: APP });
    await c.login(rig.server);
    const first = await c.ok(['sync', '--agent', 'pi', '--json']);
    expect(first).toMatchObject({ failed: 0, createdSessions: MINE, sessionsChecked: MINE });
    const metaPages = Math.ceil((MINE + OTHERS) / LIMITS.maxSessionsPerPull);
    expect(first.requests).toBeLessThanOrEqual(FIXED + metaPages);
    expect(c.sessionFiles()).toHaveLength(MINE);

    // Nothing new: the cached keys answer, one request.
    expect((await c.ok(['sync', '--agent', 'pi', '--json'])).requests).toBe(1);

    // The other project grows by 50 sessions on machine A; this project's next sync (any agent's run) learns their
    // keys in one page's worth of requests, and takes none of them.
    for (let n = OTHERS; n < OTHERS + 50; n++) plantSession(aOther, 1000 + n, 1, { pad: 10 });
    expect(await a.ok(['push', '--all', '--agent', 'pi', '--json'])).toMatchObject({ failed: 0, pushedSessions: 50 });
    const after = await c.ok(['sync', '--agent', 'claude-code', '--json']);
    expect(after).toMatchObject({ failed: 0, createdSessions: 0 });
    expect(after.requests).toBeLessThanOrEqual(1 + Math.ceil(50 / LIMITS.maxSessionsPerPull));
    expect((await c.ok(['sync', '--agent', 'pi', '--json'])).requests).toBe(1);
    expect(c.sessionFiles()).toHaveLength(MINE);

    // Every project's sessions onto another fresh machine: their agents (metas) and their pages, a page of sessions a
    // request each.
    const d = new Machine(rig.root, 'd', { remote: APP });
    await d.login(rig.server);
    const every = await d.ok(['pull', '--all', '--agent', 'pi', '--json']);
    const total = MINE + OTHERS + 50;
    expect(every).toMatchObject({ failed: 0, createdSessions: total });
    expect(every.requests).toBeLessThanOrEqual(FIXED + 2 * Math.ceil(total / LIMITS.maxSessionsPerPull));
  }, 180_000);
});

describe('the same sync against a server that takes one session per pull request (the app as on Workers)', () => {
  it('asks each meta alone after the one refusal, and files every session under its project as before', async () => {
    const dir = tempDir('sessync-sync-requests-one-');
    try {
      // The real app with a BUCKET binding in its env, as Workers runs it (its store a MemoryStore instead of R2):
      // POST /v1/pulls of more than one session is refused with 413.
      const app = createApp({ store: new MemoryStore(), adminSecret: TEST_ADMIN_SECRET });
      const target = appFetcher(app, { BUCKET: {} });
      const { token } = await adminCreateAccount(target, TEST_ADMIN_SECRET);
      const seen: string[] = [];
      const recording: typeof fetch = async (input, init) => {
        const req = new Request(input, init);
        const res = await target.fetch(req);
        seen.push(`${req.method} ${new URL(req.url).pathname} ${res.status}`);
        return res;
      };
      const api = () => new ApiClient({ url: 'http://sessync.test', token, fetch: recording, retries: 0 });
      const mine = join(dir.dir, 'mine');
      const other = join(dir.dir, 'other');
      mkdirSync(mine, { recursive: true });
      mkdirSync(other, { recursive: true });
      const laptop = { SESSYNC_HOME: join(dir.dir, 'laptop') };
      const desktop = { SESSYNC_HOME: join(dir.dir, 'desktop') };
      for (let i = 0; i < 3; i++) writeSession(join(laptop.SESSYNC_HOME, 'sessions'), mine, `0000000${i}-mine`, 2);
      for (let i = 0; i < 4; i++) writeSession(join(laptop.SESSYNC_HOME, 'sessions'), other, `0000000${i}-other`, 2);
      expect(await runSync({ mode: 'push', all: true, cwd: mine, env: laptop, api: api() })).toMatchObject({ failed: 0, pushedSessions: 7 });

      seen.length = 0;
      const r = await runSync({ mode: 'pull', cwd: mine, env: desktop, api: api() });
      expect(r).toMatchObject({ failed: 0, createdSessions: 3, pulledEntries: 6 });
      expect(r.otherProjects).toMatchObject({ thisProject: 3, sessions: 4, keys: [{ key: `path:${other}`, sessions: 4 }] });
      // The metas' one refused group, then a GET each; the pulls' own batcher learns the same once.
      expect(seen.filter((x) => x.startsWith('GET /v1/sessions/'))).toHaveLength(7);
      expect(seen.filter((x) => x === 'POST /v1/pulls 413')).toHaveLength(2);
    } finally {
      dir.cleanup();
    }
  }, 60_000);
});
