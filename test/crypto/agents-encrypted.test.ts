// Claude Code and Codex sessions on an encrypted account: two machines sync them both ways, and nothing of them is
// readable at rest; the agent travels only inside the sealed meta (the other machine still places the session right).
import { appendFileSync, realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClaudeMachine, lineSet, turn } from '../agents/claude-rig.js';
import { CodexMachine, lines, msg, newId, startRollout } from '../agents/codex-rig.js';
import { startNodeServer, useServer, type Machine } from '../sync/helpers.js';
import { fsObjects, readable } from './crypto-rig.js';

const SESSION = '7e1c0d3a-5b2f-4c1e-9a8d-0f6b2c4d8e11';

/** a logs in (the new account becomes encrypted), b logs in and imports a's key. */
async function keyed<M extends Machine>(a: M, b: M, server: Parameters<Machine['login']>[0]): Promise<void> {
  const login = await a.login(server, { encrypt: true });
  expect(login).toMatchObject({ encrypted: true, hasKey: true });
  await b.login(server, { encrypt: true });
  await b.ok(['key', 'import', '--json'], login.key as string);
}

describe('Claude Code sessions on an encrypted account (real sessync serve, file store)', () => {
  const rig = useServer(startNodeServer, 'sessync-e2e-agents-');

  it('a Claude Code session syncs both ways byte-exact; no stored object holds its text, cwd, remote or agent', async () => {
    const a = new ClaudeMachine(rig.root, 'cc-a', { remote: 'git@github.com:Acme/Claude-Secret.git' });
    const b = new ClaudeMachine(rig.root, 'cc-b', { remote: 'git@github.com:Acme/Claude-Secret.git' });
    await keyed(a, b, rig.server);
    const aCwd = realpathSync(a.project);
    const first = turn(SESSION, aCwd, null, 'the vault code is tangerine-9132', ['aaaaaaaa-0000-4000-8000-0000000000a1', 'aaaaaaaa-0000-4000-8000-0000000000a2'], '2026-01-01T10:00:00.000Z');
    a.write(`${SESSION}.jsonl`, first);
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
    // Placed in b's own Claude Code folder: the agent and project came out of the sealed meta.
    expect(b.read(`${SESSION}.jsonl`)).toBe(a.read(`${SESSION}.jsonl`));
    const bCwd = realpathSync(b.project);
    b.write(`${SESSION}.jsonl`, b.read(`${SESSION}.jsonl`) + turn(SESSION, bCwd, 'aaaaaaaa-0000-4000-8000-0000000000a2', 'b: rotate tangerine-9132', ['bbbbbbbb-0000-4000-8000-0000000000b1', 'bbbbbbbb-0000-4000-8000-0000000000b2'], '2026-01-01T10:00:05.000Z'));
    for (const m of [b, a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(new Set(lineSet(a.read(`${SESSION}.jsonl`)))).toEqual(new Set(lineSet(b.read(`${SESSION}.jsonl`))));

    const secrets = ['tangerine-9132', 'Claude-Secret', 'claude-secret', aCwd, bCwd, '"claude-code"'];
    expect(readable([{ key: 'a', text: a.read(`${SESSION}.jsonl`) }], secrets).length).toBeGreaterThan(2); // the control
    const objects = fsObjects(rig.server.dataDir!);
    expect(objects.some((o) => o.key.includes(SESSION))).toBe(true);
    expect(readable(objects, secrets)).toEqual([]);
  }, 120_000);
});

describe('Codex sessions on an encrypted account (real sessync serve, file store)', () => {
  // A server of its own: the first login of an account is the one that makes its key.
  const rig = useServer(startNodeServer, 'sessync-e2e-codex-');

  it('a Codex rollout syncs both ways byte-exact; no stored object holds its text, cwd, remote or agent', async () => {
    const a = new CodexMachine(rig.root, 'cx-a', { remote: 'git@github.com:Acme/Codex-Secret.git' });
    const b = new CodexMachine(rig.root, 'cx-b', { remote: 'git@github.com:Acme/Codex-Secret.git' });
    await keyed(a, b, rig.server);
    const id = newId();
    startRollout(a, id, msg('the deploy token is kumquat-5521', '2026-01-01T00:00:01.000Z'));
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
    expect(b.rollouts()).toEqual(a.rollouts()); // where Codex looks, named as Codex names it
    appendFileSync(b.rolloutOf(id), lines(msg('b: revoke kumquat-5521', '2026-01-01T00:00:02.000Z')));
    for (const m of [b, a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(a.text(id)).toContain('b: revoke kumquat-5521');
    expect(new Set(lineSet(a.text(id)))).toEqual(new Set(lineSet(b.text(id))));

    const secrets = ['kumquat-5521', 'Codex-Secret', 'codex-secret', a.project, b.project, '"codex"'];
    const objects = fsObjects(rig.server.dataDir!);
    expect(objects.some((o) => o.key.includes(id))).toBe(true);
    expect(readable(objects, secrets)).toEqual([]);
  }, 120_000);
});
