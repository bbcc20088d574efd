// The cache of the server's metas (remote-meta.json, written without an fsync): a copy damaged by a crash is taken as
// none and rebuilt from the server, so a sync never fails on it. Real serve, the real CLI.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, useServer } from './helpers.js';

describe('remote-meta.json, a cache', () => {
  const rig = useServer(undefined, 'sessync-remote-meta-cache-');

  it('damaged (a crash after its rename, before its bytes reached the disk): the next sync rebuilds it', async () => {
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/remote-meta-a.git' });
    const b = new Machine(rig.root, 'b', { remote: 'git@github.com:acme/remote-meta-b.git' });
    for (const m of [a, b]) await m.login(rig.server);
    for (let n = 0; n < 3; n++) plantSession(a, n, 2);
    await a.ok(['push', '--all', '--json']);
    await b.ok(['sync', '--json']); // b's project has nothing: the other project's metas are cached
    const cache = join(b.serverState(), 'remote-meta.json');
    expect(existsSync(cache)).toBe(true);
    writeFileSync(cache, '\0\0\0\0');
    const s = await b.ok(['sync', '--json']);
    expect(s).toMatchObject({ failed: 0 });
    expect(Object.keys(JSON.parse(readFileSync(cache, 'utf8')) as object)).toHaveLength(3);
  });
});
