// The first encrypted push of several sessions: each new session's sealed meta rides with its entries (no announcement
// round: its data key is derived from its id) in the shared multi-session requests, no session's meta is asked for
// first, and each file is read once (a bad line reported once).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { createAccountKey } from '../../cli/keys/key-actions.js';
import { saveKey } from '../../cli/keys/key-store.js';
import { serializeLine } from '../../shared/jsonl.js';
import { useServer, type TestServer } from '../sync/helpers.js';

const ctx = useServer(undefined, 'sessync-announce-');

/** A session file of `n` chained message entries; `badLine` adds a line that is not an entry after the first. */
function writeSession(root: string, cwd: string, id: string, n: number, badLine = false): void {
  const header = { type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd };
  const lines = [serializeLine(header as never)];
  for (let i = 0; i < n; i++) {
    lines.push(serializeLine({ type: 'message', id: `${id.slice(0, 8)}-${i}`, parentId: i === 0 ? null : `${id.slice(0, 8)}-${i - 1}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i + 1)).toISOString(), message: { role: 'user', content: [{ type: 'text', text: `secret ${i}` }] } } as never));
    if (badLine && i === 0) lines.push('{"type":"message","id":');
  }
  const dir = projectDir(root, cwd);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, sessionFileName(header.timestamp, id)), lines.join('\n') + '\n');
}

/** A project folder, the homes of two machines, and the server's account. */
async function twoHomes(server: TestServer, root: string): Promise<{ cwd: string; laptop: { SESSYNC_HOME: string }; desktop: { SESSYNC_HOME: string }; account: string }> {
  const cwd = join(root, 'project');
  mkdirSync(cwd, { recursive: true });
  const account = (await new ApiClient({ url: server.url, token: server.token }).whoami()).account;
  return { cwd, laptop: { SESSYNC_HOME: join(root, 'laptop') }, desktop: { SESSYNC_HOME: join(root, 'desktop') }, account };
}

describe('first encrypted push of several sessions', () => {
  it('sends each session\'s meta with its entries in one shared POST /v1/batches request, asks for no session meta (then or on a later push), and reports a bad line once', async () => {
    const { server, root } = ctx;
    const { cwd, laptop, desktop, account } = await twoHomes(server, root);
    const made = await createAccountKey({ api: new ApiClient({ url: server.url, token: server.token, account }), account, env: laptop });
    await saveKey(desktop, server.url, account, made.exported);
    const ids = ['00000001-announce', '00000002-announce', '00000003-announce'];
    ids.forEach((id, i) => writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 5, i === 0));

    // The real client against the real server; this wrapper only writes down each request's method and path.
    const seen: string[] = [];
    const counting: typeof fetch = (input, init) => {
      seen.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    };
    const push = await runSync({ mode: 'push', all: true, cwd, env: laptop, api: new ApiClient({ url: server.url, token: server.token, account, fetch: counting }) });
    expect(push).toMatchObject({ failed: 0, pushedSessions: 3, pushedEntries: 15, skippedLines: 1 });
    // Each session's key is derived from its id (the server refuses a batch under another key): no GET of its meta.
    expect(seen.filter((r) => r.startsWith('GET /v1/sessions/'))).toEqual([]);
    // Three sessions' metas and entries in one request, no announcement round first; none by the one-session route.
    expect(seen.filter((r) => r === 'POST /v1/batches')).toHaveLength(1);
    // One batch per session: its meta and entries, no empty batch before them.
    for (const id of ids) expect(Object.values((await new ApiClient({ url: server.url, token: server.token }).sessionMeta(id)).hosts)).toEqual([1]);
    expect(seen.filter((r) => /^POST \/v1\/sessions\/.+\/batches$/.test(r))).toEqual([]);

    seen.length = 0;
    const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url: server.url, token: server.token, account, fetch: counting }) });
    expect(pull).toMatchObject({ failed: 0, createdSessions: 3, pulledEntries: 15, damagedBatches: 0 });
    // No meta request per new session: its first page carries the sealed meta, which gives its key and places its file.
    expect(seen.filter((r) => r.startsWith('GET /v1/sessions/'))).toEqual([]);
    expect(seen.filter((r) => r === 'POST /v1/pulls')).toHaveLength(1);

    // A later push of the same sessions: their data keys were written down with the acknowledgements, so none is
    // asked for again; one request carries the new entries.
    for (const id of ids) {
      const file = join(projectDir(join(laptop.SESSYNC_HOME, 'sessions'), cwd), sessionFileName('2026-01-01T00:00:00.000Z', id));
      appendFileSync(file, serializeLine({ type: 'message', id: `${id.slice(0, 8)}-5`, parentId: `${id.slice(0, 8)}-4`, timestamp: '2026-01-01T00:01:00.000Z', message: { role: 'user', content: [{ type: 'text', text: 'later' }] } } as never) + '\n');
    }
    seen.length = 0;
    const later = await runSync({ mode: 'push', all: true, cwd, env: laptop, api: new ApiClient({ url: server.url, token: server.token, account, fetch: counting }) });
    expect(later).toMatchObject({ failed: 0, pushedSessions: 3, pushedEntries: 3 });
    expect(seen.filter((r) => r.startsWith('GET /v1/sessions/'))).toEqual([]);
    expect(seen.filter((r) => r === 'POST /v1/batches')).toHaveLength(1);
    expect(await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: new ApiClient({ url: server.url, token: server.token, account }) })).toMatchObject({ failed: 0, pulledEntries: 3 });
  }, 60_000);
});

describe('first encrypted push of a session the server holds in plaintext (the conversion is unfinished)', () => {
  const rig = useServer(undefined, 'sessync-announce-plain-');

  it('is refused at its announcement with what to run, not retried as a seq conflict, and stores nothing', async () => {
    const { server, root } = rig;
    const { cwd, laptop, desktop, account } = await twoHomes(server, root);
    const api = () => new ApiClient({ url: server.url, token: server.token, account });
    const id = '00000009-announce';
    writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, id, 3);
    expect(await runSync({ mode: 'push', all: true, cwd, env: laptop, api: api() })).toMatchObject({ failed: 0, pushedEntries: 3 });
    // The account becomes encrypted (as `sessync key init` begins) while the session is still plaintext there.
    const made = await createAccountKey({ api: api(), account, env: laptop });
    await saveKey(desktop, server.url, account, made.exported);
    const before = await api().sessionMeta(id);

    // A copy of the same file on the desktop, which has the key and has never synced it.
    writeSession(join(desktop.SESSYNC_HOME, 'sessions'), cwd, id, 3);
    const notes: string[] = [];
    const r = await runSync({ mode: 'push', all: true, cwd, env: desktop, api: api(), note: (t) => notes.push(t) });
    expect(r.failed).toBe(1);
    expect(r.sessions.find((s) => s.session === id)?.error?.message).toMatch(/still plaintext.*sessync key init/);
    expect(notes.filter((n) => /refused .*sealing it again/.test(n))).toEqual([]);
    expect(await api().sessionMeta(id)).toEqual(before);
  }, 60_000);
});
