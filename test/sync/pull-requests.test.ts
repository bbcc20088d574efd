// A pull into an empty machine: what it asks of the server (one POST /v1/pulls for many sessions, their metas inside),
// and the same pull against an older server that knows no `withMeta` (asked without it, metas by GET).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { FRAMES_TYPE } from '../../shared/batch-frames.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { TEST_ADMIN_SECRET, adminCreateAccount, appFetcher } from '../worker/routes-helpers.js';
import { tempDir, useServer } from './helpers.js';
import { writeSession } from './session-files.js';

/** A fetch that writes down each request's method and path (and else leaves it alone). */
function recording(target: typeof fetch = fetch): { fetch: typeof fetch; seen: string[]; types: Map<string, string[]> } {
  const seen: string[] = [];
  const types = new Map<string, string[]>();
  const f: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const name = `${req.method} ${new URL(req.url).pathname}`;
    seen.push(name);
    const res = await target(req);
    types.set(name, [...(types.get(name) ?? []), res.headers.get('content-type') ?? '']);
    return res;
  };
  return { fetch: f, seen, types };
}

const SESSIONS = 40;
const ids = Array.from({ length: SESSIONS }, (_, i) => `0000${String(i).padStart(4, '0')}-pull-requests`);

describe('pull of many sessions into an empty machine (real server)', () => {
  const ctx = useServer(undefined, 'sessync-pull-requests-');

  it('costs one POST /v1/pulls for all of them, their metas inside: no GET per session, no single-session pull', async () => {
    const { server, root } = ctx;
    const cwd = join(root, 'project');
    mkdirSync(cwd, { recursive: true });
    const laptop = { SESSYNC_HOME: join(root, 'laptop') };
    const desktop = { SESSYNC_HOME: join(root, 'desktop') };
    const paths = ids.map((id, i) => writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 3 + (i % 4)));
    const push = await runSync({ mode: 'push', all: true, cwd, env: laptop, api: new ApiClient({ url: server.url, token: server.token }) });
    expect(push).toMatchObject({ failed: 0, pushedSessions: SESSIONS });

    const rec = recording();
    const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url: server.url, token: server.token, fetch: rec.fetch }) });
    expect(rec.types.get('POST /v1/pulls')).toEqual([FRAMES_TYPE]);
    expect(pull).toMatchObject({ failed: 0, createdSessions: SESSIONS, pulledEntries: push.pushedEntries });
    expect(rec.seen.filter((r) => r.startsWith('GET /v1/sessions/'))).toEqual([]);
    expect(rec.seen.filter((r) => /^POST \/v1\/sessions\/.+\/pull$/.test(r))).toEqual([]);
    expect(rec.seen.filter((r) => r === 'POST /v1/pulls')).toHaveLength(1);
    // The changes feed, the account's key record, the pull: nothing else.
    expect(rec.seen.sort()).toEqual(['GET /v1/account/key', 'GET /v1/changes', 'POST /v1/pulls']);
    expect(pull.requests).toBe(3);
    // Each file as the laptop has it, byte for byte.
    for (const [i, id] of ids.entries()) {
      const here = join(projectDir(join(desktop.SESSYNC_HOME, 'sessions'), cwd), sessionFileName('2026-01-01T00:00:00.000Z', id));
      expect(readFileSync(here, 'utf8'), id).toBe(readFileSync(paths[i]!, 'utf8'));
    }
  }, 120_000);
});

describe('pull into an empty machine from an older server (no `withMeta`)', () => {
  it('asks again without the flag once, then GETs each new session\'s meta, and creates every session', async () => {
    const dir = tempDir('sessync-pull-old-');
    try {
      const app = createApp({ store: new MemoryStore(), adminSecret: TEST_ADMIN_SECRET });
      const target = appFetcher(app);
      const { token } = await adminCreateAccount(target, TEST_ADMIN_SECRET);
      // Stands in for a server from before `withMeta` and frames: its strict request schemas refuse the key with this
      // 400, and it knows no frames (it answers JSON whatever the Accept).
      let refused = 0;
      const older: typeof fetch = async (input, init) => {
        const req = new Request(input, init);
        req.headers.set('accept', 'application/json');
        const path = new URL(req.url).pathname;
        if (req.method === 'POST' && (path === '/v1/pulls' || path.endsWith('/pull'))) {
          const text = await req.clone().text();
          if (text.includes('"withMeta"')) {
            refused++;
            const at = path === '/v1/pulls' ? 'pull sessions: sessions.0' : 'pull: (body)';
            return Response.json({ error: { code: 'bad_input', message: `${at}: Unrecognized key: "withMeta"`, retryable: false } }, { status: 400 });
          }
        }
        return target.fetch(req);
      };
      const cwd = join(dir.dir, 'project');
      mkdirSync(cwd, { recursive: true });
      const laptop = { SESSYNC_HOME: join(dir.dir, 'laptop') };
      const desktop = { SESSYNC_HOME: join(dir.dir, 'desktop') };
      for (const id of ids.slice(0, 5)) writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 4);
      const api = (f: typeof fetch) => new ApiClient({ url: 'http://sessync.test', token, fetch: f, retries: 0 });
      expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: api(older) })).toMatchObject({ failed: 0, pushedSessions: 5 });

      const rec = recording(older);
      const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: api(rec.fetch) });
      expect(pull).toMatchObject({ failed: 0, createdSessions: 5, pulledEntries: 20 });
      expect(refused).toBe(1); // the flag is not sent again once refused
      expect(rec.seen.filter((r) => r.startsWith('GET /v1/sessions/'))).toHaveLength(5);
      expect(new Set(rec.types.get('POST /v1/pulls'))).toEqual(new Set(['application/json']));
    } finally {
      dir.cleanup();
    }
  }, 60_000);
});
