// Caches of an in-process run (tail state, list rows, the session index) go under the run's own SESSYNC_HOME, never
// under the process's: a run with its own env (a bench, a test, a watcher) leaves the user's ~/.sessync alone.
import { appendFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { resumeSession } from '../../cli/store/resume-session.js';
import { flushIndexWrites } from '../../cli/store/session-file-index-deferred.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { serializeLine } from '../../shared/jsonl.js';
import { importClaude } from '../../cli/agents/claude-import.js';
import { loadMirrorState } from '../../cli/agents/mirror-state.js';
import { turn } from '../agents/claude-rig.js';
import { useServer } from './helpers.js';
import { writeSession } from './session-files.js';

const ID = '00000000-run-home-caches';

/** Files under `<home>/cache/<kind>` (none when the folder is missing). */
function cached(home: string, kind: string): string[] {
  const dir = join(home, 'cache', kind);
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe('caches of an in-process run live under its own SESSYNC_HOME', () => {
  const rig = useServer(undefined, 'sessync-run-home-');
  const saved = { home: process.env.HOME, sessync: process.env.SESSYNC_HOME };
  let processHome = '';
  let userHome = '';
  let n = 0;
  beforeEach(() => {
    // The process's own homes (new for each test): what a run with another env must not write into.
    n++;
    processHome = join(rig.root, `process-sessync-home-${n}`);
    userHome = join(rig.root, `user-${n}`);
    mkdirSync(userHome, { recursive: true });
    process.env.SESSYNC_HOME = processHome;
    process.env.HOME = userHome;
  });
  afterEach(() => {
    for (const [k, v] of [['HOME', saved.home], ['SESSYNC_HOME', saved.sessync]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('push, pull (new file, then appended), the leaf check and resume write nothing under process.env.SESSYNC_HOME', async () => {
    const cwd = join(rig.root, 'project');
    mkdirSync(cwd, { recursive: true });
    const laptop = { SESSYNC_HOME: join(rig.root, 'laptop') };
    const desktop = { SESSYNC_HOME: join(rig.root, 'desktop') };
    const api = () => new ApiClient({ url: rig.server.url, token: rig.server.token });
    const mine = writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, ID, 4);

    expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: api() })).toMatchObject({ failed: 0, pushedSessions: 1 });
    expect(await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: api() })).toMatchObject({ failed: 0, createdSessions: 1 });
    // Another writer (pi) appends on the laptop; the next push and pull go through the append paths.
    const more = { type: 'message', id: 'more-1', parentId: `${ID.slice(0, 8)}-3`, timestamp: '2026-01-01T00:01:00.000Z', message: { role: 'user', content: [{ type: 'text', text: 'more' }] } };
    appendFileSync(mine, serializeLine(more as never) + '\n');
    expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: api() })).toMatchObject({ failed: 0 });
    expect(await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: api() })).toMatchObject({ failed: 0, pulledEntries: 1 });

    const pulled = join(projectDir(join(desktop.SESSYNC_HOME, 'sessions'), cwd), sessionFileName('2026-01-01T00:00:00.000Z', ID));
    const { info } = await resumeSession(pulled, desktop);
    expect(info.leafId).toBe('more-1');
    await flushIndexWrites();

    expect(existsSync(processHome), `nothing under process.env.SESSYNC_HOME (${readdirSafe(processHome)})`).toBe(false);
    expect(existsSync(join(userHome, '.sessync')), 'nothing under ~/.sessync').toBe(false);
    for (const home of [laptop.SESSYNC_HOME, desktop.SESSYNC_HOME]) {
      expect(cached(home, 'tail'), `${home}: tail state`).toHaveLength(1);
      expect(cached(home, 'list').length, `${home}: list rows`).toBeGreaterThan(0);
    }
    expect(cached(desktop.SESSYNC_HOME, 'index'), 'the resumed session\'s index').toHaveLength(1);
  }, 120_000);

  it('a Claude Code mirror import (new mirror, then appended to) writes nothing under process.env.SESSYNC_HOME', async () => {
    const dir = join(rig.root, 'claude-run');
    const env = { HOME: dir, SESSYNC_HOME: join(dir, 'home'), CLAUDE_CONFIG_DIR: join(dir, 'claude') };
    const folder = join(dir, 'claude', 'projects', '-home-me-code-app');
    mkdirSync(folder, { recursive: true });
    const s = '3b0c6f53-7f6e-4a2b-9f0e-5d6c7b8a9e02';
    const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const file = join(folder, `${s}.jsonl`);
    writeFileSync(file, turn(s, '/home/me/code/app', null, 'first', [u(1), u(2)], '2026-01-01T00:00:00.000Z'));
    const state = await loadMirrorState(env);
    expect(await importClaude(env, state, () => {})).toMatchObject({ sessions: 1 });
    appendFileSync(file, turn(s, '/home/me/code/app', u(2), 'second', [u(3), u(4)], '2026-01-01T00:00:00.000Z'));
    expect(await importClaude(env, state, () => {})).toMatchObject({ lines: 3 });
    expect(existsSync(processHome), `nothing under process.env.SESSYNC_HOME (${readdirSafe(processHome)})`).toBe(false);
    expect(cached(env.SESSYNC_HOME, 'tail'), 'the mirror\'s tail state').toHaveLength(1);
  }, 60_000);
});

function readdirSafe(dir: string): string {
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).join(', ') : 'none';
}
