// push, pull and sync with the server stopped (connection refused), with and without unpushed entries: a run that
// needed the server fails with `unavailable` (exit 1, retryable), and one that did not ask it (a push with nothing to
// push) says so in its summary (`serverChecked: false`), so a script can tell "up to date" from "server down".
// Real parts: a real `sessync serve`, stopped with SIGKILL, and the real CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { Machine, startNodeServer, type TestServer } from './helpers.js';

const REMOTE = 'git@github.com:acme/server-down.git';

/** The last stderr line of a --json run: the error document. */
const lastError = (stderr: string) => (JSON.parse(stderr.trim().split('\n').at(-1)!) as { error: { code: string; message: string; retryable: boolean } }).error;

describe('push, pull and sync with the server down', () => {
  let server: TestServer & { cleanup(): void };
  let root: { dir: string; cleanup(): void };
  let m: Machine;
  let id: string;
  beforeAll(async () => {
    server = await startNodeServer();
    root = tempDir('sessync-down-');
    m = new Machine(root.dir, 'm', { remote: REMOTE });
    await m.login(server);
    id = await m.newSession();
    await m.say(id, 'one');
  }, 90_000);
  afterAll(async () => {
    await server.stop();
    server.cleanup();
    root.cleanup();
  });

  it('with the server up: a push and a sync that asked it say so; a push with nothing to send says it did not ask', async () => {
    const pushed = await m.ok(['push', '--json']);
    expect(pushed).toMatchObject({ pushedEntries: 1, serverChecked: true });
    expect(await m.ok(['sync', '--json'])).toMatchObject({ requests: 1, serverChecked: true });
    expect(await m.ok(['pull', '--json'])).toMatchObject({ serverChecked: true });
    const noop = await m.ok(['push', '--json']);
    expect(noop).toMatchObject({ requests: 0, pushedEntries: 0, serverChecked: false });
    expect(await m.ok(['push'])).toMatch(/^push: 1 session checked; nothing to push, so the server was not asked; 0 requests\n$/);
  });

  it('server down, nothing unpushed: push says it did not ask the server; pull and sync fail with unavailable', async () => {
    await server.stop();
    const push = await m.run(['push']);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toBe('push: 1 session checked; nothing to push, so the server was not asked; 0 requests\n');
    expect((await m.run(['push', '--json'])).json()).toMatchObject({ requests: 0, serverChecked: false });
    for (const mode of ['pull', 'sync']) {
      const r = await m.run([mode]);
      expect(r.code, `${mode}: ${r.stdout}`).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/ECONNREFUSED.*Nothing was synced; here 1 session\(s\), 0 with entries to push/);
      const j = await m.run([mode, '--json']);
      expect(j.code).toBe(1);
      expect(j.stdout).toBe('');
      expect(lastError(j.stderr)).toMatchObject({ code: 'unavailable', retryable: true });
    }
  });

  it('server down, an entry unpushed: push, pull and sync all fail with unavailable, and the entry stays to push', async () => {
    await m.say(id, 'two, written while the server is down');
    for (const mode of ['push', 'pull', 'sync']) {
      const r = await m.run([mode, '--json']);
      expect(r.code, `${mode}: ${r.stdout}`).toBe(1);
      expect(r.stdout).toBe('');
      expect(lastError(r.stderr)).toMatchObject({ code: 'unavailable', retryable: true, message: expect.stringContaining('ECONNREFUSED') });
    }
    expect((await m.run(['pull'])).stderr).toMatch(/Nothing was synced; here 1 session\(s\), 1 with entries to push/);
    // status offline still exits 0 and says the server was not checked.
    const st = await m.run(['status', '--json']);
    expect(st.code).toBe(0);
    expect(st.json()).toMatchObject({ serverChecked: false, serverError: { code: 'unavailable' }, sessions: [{ session: id, unpushedEntries: 1 }] });
    await server.restart();
    expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 1, serverChecked: true });
  });
});
