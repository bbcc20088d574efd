// `sessync key rotate`: a new account key, old and new sessions readable after it, a machine with the old key told to import.
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, startNodeServer, useServer } from '../sync/helpers.js';
import { REMOTE, encryptedPair } from './crypto-rig.js';

describe('key rotation on the Node server', () => {
  const rig = useServer(startNodeServer, 'sessync-rotate-');

  it('re-wraps every session key; the old key is refused with how to import; old and new sessions open with the new key', async () => {
    const { a, b, key: oldKey } = await encryptedPair(rig.root, rig.server);
    const before = await a.newSession();
    await a.say(before, 'written before the rotation');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);

    const r = await a.ok(['key', 'rotate', '--json']);
    expect(r).toMatchObject({ rewrapped: 1, left: [] });
    expect(r.key).toMatch(/^sessync-key-1\./);
    expect(r.key).not.toBe(oldKey);
    expect(r.replaced).toBe(oldKey.split('.')[1]);
    // The rotating machine goes on: a new session and more of the old one, under the new key.
    const after = await a.newSession();
    await a.say(after, 'written after the rotation');
    await a.say(before, 'the old session goes on');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0, pushedEntries: 2 });

    // The machine with the old key: refused before anything, and told to import the new one.
    const old = await b.run(['sync', '--json']);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/rotated on another machine.*sessync key import/);
    // Its old key cannot be imported again either.
    const again = await b.run(['key', 'import'], { input: oldKey });
    expect(again.stderr).toMatch(/retired by a rotation/);
    await b.ok(['key', 'import', '--json'], r.key);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1, pulledEntries: 2 });
    for (const s of [before, after]) expect([...entrySet(b.fileOf(s)).entries()].sort()).toEqual([...entrySet(a.fileOf(s)).entries()].sort());

    // A fresh machine with only the new key reads both.
    const c = new Machine(rig.root, 'fresh', { remote: REMOTE });
    await c.login(rig.server, { encrypt: true });
    await c.ok(['key', 'import', '--json'], r.key);
    expect(await c.ok(['pull', '--json'])).toMatchObject({ failed: 0, createdSessions: 2 });
    expect(await c.ok(['key', 'status', '--json'])).toMatchObject({ matches: true, keyId: r.keyId });
    // A second rotation right after: every session moves again, nothing left behind.
    expect(await a.ok(['key', 'rotate', '--json'])).toMatchObject({ rewrapped: 2, left: [] });
  }, 120_000);
});
