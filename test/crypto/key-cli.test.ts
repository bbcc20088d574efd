// The key commands as a user meets them: login on a new account prints the key once with a warning, --no-encrypt
// keeps it plaintext, an account with sessions is converted only by `key init`; help text and --json for each verb.
import { describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { Machine, startNodeServer, useServer } from '../sync/helpers.js';
import { keyPath } from '../../cli/keys/key-store.js';
import { REMOTE } from './crypto-rig.js';

describe('sessync key and login', () => {
  const rig = useServer(startNodeServer, 'sessync-keycli-');

  it('--no-encrypt keeps a new account plaintext; with sessions a login does not encrypt it; key commands answer in --json', async () => {
    const a = new Machine(rig.root, 'plain', { remote: REMOTE });
    const login = await a.login(rig.server); // --no-encrypt
    expect(login).toMatchObject({ encrypted: false });
    expect(login.key).toBeUndefined();
    expect(await a.ok(['key', 'status', '--json'])).toMatchObject({ encrypted: false, advice: expect.stringContaining('sessync key init') });
    const id = await a.newSession();
    await a.say(id, 'plaintext for now');
    await a.ok(['push', '--json']);
    const noKey = await a.run(['key', 'export', '--json']);
    expect(noKey.code).toBe(1);
    expect(JSON.parse(noKey.stderr).error.message).toMatch(/has no key/);

    // Another machine's first login: the account has sessions, so it stays as it is, and says how to convert.
    const b = new Machine(rig.root, 'second', { remote: REMOTE });
    const r = await b.run(['login', rig.server.url, '--token', rig.server.token]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/plaintext sessions: `sessync key init`/);
    expect(await b.ok(['key', 'status', '--json'])).toMatchObject({ encrypted: false });

    // key init (human output): the key is printed once on stderr with the warning; the file is 0600.
    const init = await b.run(['key', 'init']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toMatch(/^sessync-key-1\.[^\n]+\nwarning: keep this key safe/m);
    expect(init.stdout).toMatch(/end-to-end encrypted with key [0-9a-f]{16}: 1 session\(s\), 1 batch\(es\) and 1 meta sealed/);
    const account = (await b.ok(['key', 'status', '--json'])).account as string;
    expect(statSync(keyPath(b.env, rig.server.url, account)).mode & 0o777).toBe(0o600);
    const exported = await b.ok(['key', 'export']);
    expect(exported.trim()).toMatch(/^sessync-key-1\./);
    // The first machine is now told to import.
    const st = await a.run(['key', 'status', '--json']);
    expect(st.code).toBe(1);
    expect(st.json()).toMatchObject({ encrypted: true, matches: false, advice: expect.stringContaining('sessync key import') });
    await a.ok(['key', 'import'], exported);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
  }, 120_000);

  it('help names every verb; bad usage is refused', async () => {
    const m = new Machine(rig.root, 'helper');
    const help = await m.ok(['key', '--help']);
    for (const verb of ['export', 'import', 'status', 'rotate', 'init', '--file']) expect(help).toContain(verb);
    expect(await m.ok(['login', '--help'])).toContain('--no-encrypt');
    await m.login(rig.server);
    expect((await m.run(['key', 'frobnicate'])).code).toBe(2);
    expect((await m.run(['key', 'status', '--file', 'x'])).code).toBe(2);
    const empty = await m.run(['key', 'import'], { input: '' });
    expect(empty.stderr).toMatch(/no key given/);
  }, 60_000);
});
