// `sessync login/tokens/logout` as real processes on a real server: per-machine tokens, revoke, logout --revoke,
// and a revoked machine that keeps its unpushed entries until it logs in again.
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, useServer } from '../sync/helpers.js';

const REMOTE = 'git@github.com:acme/tokens-app.git';

async function whoamiStatus(url: string, token: string): Promise<number> {
  return (await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })).status;
}

function savedToken(m: Machine): string {
  return (JSON.parse(readFileSync(join(m.home, 'login.json'), 'utf8')) as { token: string }).token;
}

describe('tokens', () => {
  const rig = useServer(undefined, 'sessync-tokens-');

  it('login issues this machine its own token named after it; `tokens` lists it marked, never a secret', async () => {
    const m = new Machine(rig.root, 'named');
    const login = await m.login(rig.server);
    expect(login).toMatchObject({ tokenId: expect.stringMatching(/^tok_/), tokenName: hostname() });
    const token = savedToken(m);
    expect(token).not.toBe(rig.server.token);
    const r = await m.run(['tokens', '--json']);
    expect(r.code).toBe(0);
    const { tokens } = r.json();
    const mine = tokens.find((t: { current: boolean }) => t.current);
    expect(mine).toMatchObject({ id: (login as { tokenId: string }).tokenId, name: hostname(), lastUsed: new Date().toISOString().slice(0, 10) });
    expect(r.stdout).not.toContain(token);
    expect(r.stdout).not.toContain(rig.server.token);
    const human = await m.ok(['tokens']);
    expect(human).toMatch(new RegExp(`\\* ${mine.id}  ${hostname()}.*\\(this machine\\)`));

    // `tokens new` shows a secret once; it works, and is listed by name.
    const issued = await m.ok(['tokens', 'new', '--name', 'ci-runner', '--json']);
    expect(await whoamiStatus(rig.server.url, issued.token)).toBe(200);
    expect((await m.ok(['tokens', '--json'])).tokens.map((t: { name?: string }) => t.name)).toContain('ci-runner');
    const noName = await m.run(['tokens', 'new']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/needs --name/);

    // Logging in again replaces this machine's token: the old one is revoked, not left behind.
    await m.login(rig.server);
    expect(await whoamiStatus(rig.server.url, token)).toBe(401);
    expect(await whoamiStatus(rig.server.url, savedToken(m))).toBe(200);
  });

  it('a revoked machine fails with a clear message, keeps its unpushed entries, and pushes them after logging in again', async () => {
    const laptop = new Machine(rig.root, 'laptop', { remote: REMOTE });
    const desktop = new Machine(rig.root, 'desktop', { remote: REMOTE });
    await laptop.ok(['login', rig.server.url, '--token', rig.server.token, '--name', 'laptop', '--json', '--no-encrypt']);
    await desktop.ok(['login', rig.server.url, '--token', rig.server.token, '--name', 'desktop', '--json', '--no-encrypt']);
    const id = await laptop.newSession();
    await laptop.say(id, 'pushed before the theft');
    await laptop.ok(['push', '--json']);
    await laptop.say(id, 'written after', 'and more');

    const listed = (await desktop.ok(['tokens', '--json'])).tokens as { id: string; name?: string }[];
    const lost = listed.find((t) => t.name === 'laptop')!;
    expect(await desktop.ok(['tokens', 'revoke', lost.id, '--json'])).toEqual({ revoked: true, id: lost.id });

    const refused = await laptop.run(['push']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/was revoked at .*log in again/);
    expect(refused.stderr).toMatch(/sessync login/);
    // Local figures still show: the two entries wait, the server's refusal is reported beside them.
    const st = await laptop.ok(['status', '--json']);
    expect(st.sessions).toEqual([expect.objectContaining({ session: id, unpushedEntries: 2 })]);
    expect(st.serverError).toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/revoked/) });
    const file = laptop.fileOf(id);
    expect(entrySet(file).size).toBe(3);

    await laptop.ok(['login', rig.server.url, '--token', rig.server.token, '--name', 'laptop', '--json', '--no-encrypt']);
    expect(await laptop.ok(['push', '--json'])).toMatchObject({ pushedEntries: 2, failed: 0 });
    await desktop.ok(['pull', '--json']);
    expect(entrySet(desktop.fileOf(id))).toEqual(entrySet(file));
  });

  it('logout --revoke revokes the token on the server, then forgets it here', async () => {
    const m = new Machine(rig.root, 'leaving');
    await m.login(rig.server);
    const token = savedToken(m);
    const out = await m.ok(['logout', '--revoke', '--json']);
    expect(out).toMatchObject({ loggedOut: true, revoked: expect.stringMatching(/^tok_/) });
    expect(await whoamiStatus(rig.server.url, token)).toBe(401);
    const after = await m.run(['tokens', '--json']);
    expect(JSON.parse(after.stderr).error.code).toBe('unauthorized');
    // Plain logout leaves the token working.
    const k = new Machine(rig.root, 'keeping');
    await k.login(rig.server);
    const kept = savedToken(k);
    await k.ok(['logout', '--json']);
    expect(await whoamiStatus(rig.server.url, kept)).toBe(200);
  });
});
