// A session seen before its meta landed is not filed under an empty project key for good: asked again next time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionMetaResponse } from '../../shared/wire.js';
import type { ApiClient } from '../../cli/api-client.js';
import { remoteProjectKeys } from '../../cli/sync/remote-keys.js';
import { SyncState } from '../../cli/sync/sync-state.js';
import type { SyncContext } from '../../cli/sync/sync-context.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Mock of an older server (one that answered a meta-less session with projectKey ''): the current one answers 404. */
function olderServerMock(answers: string[]): { api: ApiClient; calls: () => number } {
  let n = 0;
  const api = {
    async sessionMeta(session: string): Promise<SessionMetaResponse> {
      const projectKey = answers[Math.min(n++, answers.length - 1)]!;
      return { session, header: projectKey ? { type: 'session', id: session, cwd: '/p', timestamp: '2026-01-01T00:00:00.000Z' } : {}, projectKey, created: '', hosts: { h1: 1 } } as SessionMetaResponse;
    },
  } as unknown as ApiClient;
  return { api, calls: () => n };
}

describe('remoteProjectKeys', () => {
  it('does not cache an empty project key; the key is learnt once the meta lands', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sessync-rk-'));
    dirs.push(home);
    const state = new SyncState(home, 'k');
    const mock = olderServerMock(['', 'git:github.com/acme/app']);
    const ctx = { api: mock.api, state, hostId: 'me', sessionsRoot: join(home, 'sessions'), env: {} } as SyncContext;
    expect([...(await remoteProjectKeys(ctx, ['s1'], []))]).toEqual([]);
    expect(await state.remoteMeta()).toEqual({});
    expect([...(await remoteProjectKeys(ctx, ['s1'], []))]).toEqual([['s1', 'git:github.com/acme/app']]);
    expect([...(await remoteProjectKeys(ctx, ['s1'], []))]).toEqual([['s1', 'git:github.com/acme/app']]);
    expect(mock.calls()).toBe(2); // cached once known
  });

  it('an empty key cached by an older sessync is asked again', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sessync-rk-'));
    dirs.push(home);
    const state = new SyncState(home, 'k');
    await state.saveRemoteMeta({ s1: { projectKey: '' } });
    const ctx = { api: olderServerMock(['git:x']).api, state, hostId: 'me', sessionsRoot: join(home, 'sessions'), env: {} } as SyncContext;
    expect([...(await remoteProjectKeys(ctx, ['s1'], []))]).toEqual([['s1', 'git:x']]);
  });
});
