// The fork rule's race over an end-to-end encrypted account: the server's order is read from sealed batches too.
import { describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { bMovesToFork, CodexMachine, convergeToOneFork, raced } from './codex-rig.js';

describe('Codex: the server order over an end-to-end encrypted account', () => {
  const rig = useServer(undefined, 'sessync-codexrace-enc-');

  it("B's continuation, written earlier and already pushed, still moves into the fork: the server received A's first", async () => {
    const remote = 'git@github.com:Acme/codex-race-secret.git';
    const a = new CodexMachine(rig.root, 'enc-a', { remote });
    const b = new CodexMachine(rig.root, 'enc-b', { remote });
    const login = await a.login(rig.server, { encrypt: true });
    await b.login(rig.server, { encrypt: true });
    await b.ok(['key', 'import', '--json'], login.key);
    const { id, aOwn } = await raced(a, b);
    await convergeToOneFork([a, b, a, b, a], id, await bMovesToFork(b, id));
    expect(a.text(id)).toBe(aOwn);
  });
});
