// fetchMetas against a mock server (an object standing in for ApiClient, named so): a group with no meta served does
// not send the rest of the run to one GET each, a failed group stops the other worker, and a server that refused
// `withMeta` is asked no more in groups.
import { describe, expect, it } from 'vitest';
import { LIMITS, type Head, type SessionMetaResponse } from '../../shared/wire.js';
import { SessyncError } from '../../shared/errors.js';
import type { ApiClient, PullItem } from '../../cli/api-client.js';
import { fetchMetas } from '../../cli/sync/remote-metas.js';
import type { SyncContext } from '../../cli/sync/sync-context.js';

const sessions = Array.from({ length: LIMITS.maxSessionsPerPull * 4 }, (_, i) => `s${String(i).padStart(5, '0')}`);
const heads: Head[] = sessions.map((session) => ({ session, host: 'h1', seq: 1 }));
const meta = (session: string) => ({ session, header: { type: 'session', id: session, cwd: '/p', timestamp: '2026-01-01T00:00:00.000Z' }, projectKey: 'k', created: '', hosts: { h1: 1 } }) as unknown as SessionMetaResponse;

/** Mock server: `answer` gives each request's results (by request number), or throws. */
function mockServer(answer: (n: number, items: readonly PullItem[]) => unknown[]): { ctx: SyncContext; calls: () => number; refuse: () => void } {
  let n = 0;
  let refused = false;
  const api = {
    get refusesMeta() {
      return refused;
    },
    async pullPages(items: readonly PullItem[]) {
      const k = n++;
      await new Promise((r) => setTimeout(r, 5));
      return { results: answer(k, items) };
    },
  } as unknown as ApiClient;
  return { ctx: { api } as unknown as SyncContext, calls: () => n, refuse: () => (refused = true) };
}

describe('fetchMetas', () => {
  it('a first group whose metas are all missing (legacy sessions) still lets the later groups bring theirs', async () => {
    const m = mockServer((n, items) => items.map((i) => (n === 0 ? { ok: true, session: i.session, batches: [], more: false } : { ok: true, session: i.session, batches: [], more: false, meta: meta(i.session) })));
    const out = await fetchMetas(m.ctx, sessions, heads);
    expect(m.calls()).toBe(4);
    expect(out.size).toBe(sessions.length - LIMITS.maxSessionsPerPull);
  });

  it('a server that refused withMeta is asked no more in groups', async () => {
    const m = mockServer((_n, items) => {
      m.refuse();
      return items.map((i) => ({ ok: true, session: i.session, batches: [], more: false }));
    });
    const out = await fetchMetas(m.ctx, sessions, heads);
    expect(out.size).toBe(0);
    expect(m.calls()).toBeLessThanOrEqual(2); // the two in flight at once
  });

  it('a group that fails ends the run: the other worker sends nothing more', async () => {
    const m = mockServer((n, items) => {
      if (n === 0) throw new SessyncError('wrong_server', 'not a sessync server');
      return items.map((i) => ({ ok: true, session: i.session, batches: [], more: false, meta: meta(i.session) }));
    });
    await expect(fetchMetas(m.ctx, sessions, heads)).rejects.toMatchObject({ code: 'wrong_server' });
    await new Promise((r) => setTimeout(r, 100));
    expect(m.calls()).toBeLessThanOrEqual(2);
  });
});
