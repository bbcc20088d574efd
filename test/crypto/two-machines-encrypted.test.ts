// Two machines on an encrypted account sync one session both ways with concurrent branches, on Node and inside
// workerd (wrangler dev); a third machine imports the key from a file, resumes it without pulling first, then a
// no-op sync still costs one request.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, readLog, startNodeServer, startWorkerdServer, useServer, type TestServer } from '../sync/helpers.js';
import { encryptedPair } from './crypto-rig.js';

const backends: [string, () => Promise<TestServer & { cleanup(): void }>][] = [
  ['node (sessync serve)', startNodeServer],
  ['workerd (wrangler dev --local)', startWorkerdServer],
];

describe.each(backends)('encrypted two machines on %s', (_name, start) => {
  const rig = useServer(start, 'sessync-e2e2m-');

  it('concurrent branches converge; a third machine with the imported key resumes', async () => {
    const { a: laptop, b: desktop, key } = await encryptedPair(rig.root, rig.server);
    const id = await laptop.newSession();
    await laptop.say(id, 'plan the feature', 'write the tests');
    expect(await laptop.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 2, failed: 0 });
    const got = await desktop.ok(['pull', '--json']);
    expect(got).toMatchObject({ createdSessions: 1, pulledEntries: 2 });
    const dFile = desktop.fileOf(id);
    expect(readLog(dFile).header.cwd).toBe(desktop.project); // placed by the (sealed, then opened) project key

    await laptop.say(id, 'laptop: refactor the parser', 'laptop: add a benchmark');
    await desktop.say(id, 'desktop: fix the flaky test');
    for (const m of [desktop, laptop, desktop, laptop]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    for (const m of [desktop, laptop]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
    const lFile = laptop.fileOf(id);
    expect(entrySet(lFile).size).toBe(6); // 5 messages and the checkout marker
    expect([...entrySet(lFile).entries()].sort()).toEqual([...entrySet(dFile).entries()].sort());
    expect((await laptop.ok(['tree', id, '--json'])).leafId).toBe((await desktop.ok(['tree', id, '--json'])).leafId);
    // Both branches: the second message has two children, one per machine.
    const lTree = (await laptop.ok(['tree', id, '--json'])) as { nodes: { children: string[] }[] };
    expect(lTree.nodes.filter((n) => n.children.length === 2)).toHaveLength(1);
    const text = JSON.stringify(readLog(dFile).entries);
    for (const t of ['laptop: add a benchmark', 'desktop: fix the flaky test']) expect(text).toContain(t);

    const third = new Machine(rig.root, 'third', { remote: 'ssh://git@GitHub.com/Acme/Secret-App.git' });
    await third.login(rig.server, { encrypt: true });
    const refused = await third.run(['resume', id.slice(0, 13), '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/sessync key import/);
    const keyFile = join(rig.root, 'third-key.txt');
    writeFileSync(keyFile, key);
    await third.ok(['key', 'import', '--file', keyFile, '--json']);
    expect(await third.ok(['resume', id.slice(0, 13), '--json'])).toBeTruthy();
    const tFile = third.fileOf(id);
    expect(readLog(tFile).header.cwd).toBe(third.project);
    expect([...entrySet(tFile).entries()].sort()).toEqual([...entrySet(lFile).entries()].sort());
    expect(await third.ok(['context', id, '--json'])).toEqual(await laptop.ok(['context', id, '--json']));
    expect(await third.ok(['sync', '--json'])).toMatchObject({ requests: 1, pushedEntries: 0, pulledEntries: 0 });
  }, 180_000);
});
