// Laptop and desktop (two SESSYNC_HOMEs, the project at different paths, one git remote) work offline, then sync
// both ways: same entries, both branches, same leaf; a third machine pulls and resumes. On Node and on workerd.
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, readLog, startNodeServer, startWorkerdServer, tempDir, useServer, pairWithSession, type TestServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/App.git';

const backends: [string, () => Promise<TestServer & { cleanup(): void }>][] = [
  ['node (sessync serve)', startNodeServer],
  ['workerd (wrangler dev --local)', startWorkerdServer],
];

describe.each(backends)('two machines on %s', (_name, start) => {
  const rig = useServer(start, 'sessync-2m-');

  it('offline appends on both sides converge: same entry set, both branches, same active leaf; a third machine resumes', async () => {
    const laptop = new Machine(rig.root, 'laptop', { remote: REMOTE });
    // The same repository cloned under another path and URL form: the project key still matches.
    const desktop = new Machine(rig.root, 'desktop', { remote: 'https://github.com/Acme/App' });
    await laptop.login(rig.server);
    await desktop.login(rig.server);

    const id = await laptop.newSession();
    await laptop.say(id, 'plan the feature', 'write the tests');
    const first = await laptop.ok(['sync', '--json']);
    expect(first).toMatchObject({ pushedEntries: 2, failed: 0 });

    const got = await desktop.ok(['pull', '--json']);
    expect(got).toMatchObject({ createdSessions: 1, pulledEntries: 2 });
    const dFile = desktop.fileOf(id);
    expect(readLog(dFile).header.cwd).toBe(desktop.project); // the local path, not the laptop's
    expect(dFile.startsWith(desktop.home)).toBe(true);

    // Both offline: each continues from the same entry.
    await laptop.say(id, 'laptop: refactor the parser', 'laptop: add a benchmark');
    await desktop.say(id, 'desktop: fix the flaky test');

    await desktop.ok(['sync', '--json']);
    await laptop.ok(['sync', '--json']);
    // The desktop pulls the laptop's entries after its own newer one: its last line (pi's leaf) would be the
    // laptop's tip, so it appends a checkout marker under its leaf and pushes it in the same run.
    const marked = await desktop.ok(['sync', '--json']);
    expect(marked).toMatchObject({ pulledEntries: 2, pushedEntries: 1 });
    expect(await laptop.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 1, pushedEntries: 0 });
    for (const m of [desktop, laptop]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });

    const lFile = laptop.fileOf(id);
    const a = entrySet(lFile);
    const b = entrySet(dFile);
    expect(a.size).toBe(6); // 5 messages and the marker
    expect(b.size).toBe(6);
    expect([...a.entries()].sort()).toEqual([...b.entries()].sort());
    for (const f of [lFile, dFile]) expect(new Set(readLog(f).ids).size).toBe(readLog(f).ids.length); // no duplicate line

    // Both branches are in the tree, and both machines pick the same leaf.
    const lTree = await laptop.ok(['tree', id, '--json']);
    const dTree = await desktop.ok(['tree', id, '--json']);
    expect(lTree.leafId).toBeTruthy();
    expect(dTree.leafId).toBe(lTree.leafId);
    const lCtx = await laptop.ok(['context', id, '--json']);
    const dCtx = await desktop.ok(['context', id, '--json']);
    expect(dCtx).toEqual(lCtx);
    // Leaf rule: among tips, the greatest timestamp, then the greater id (the desktop's entry was written last).
    const entries = readLog(lFile).entries;
    const parents = new Set(entries.map((e) => e.parentId));
    const tips = entries.filter((e) => !parents.has(e.id));
    expect(tips).toHaveLength(2);
    const newest = tips.sort((x, y) => (String(x.timestamp) < String(y.timestamp) ? -1 : String(x.timestamp) > String(y.timestamp) ? 1 : String(x.id) < String(y.id) ? -1 : 1)).at(-1)!;
    expect(lTree.leafId).toBe(newest.id);
    // pi's leaf (the last line) is that same entry on both machines.
    for (const f of [lFile, dFile]) expect(readLog(f).ids.at(-1)).toBe(lTree.leafId);
    expect(JSON.stringify(lCtx)).toContain('desktop: fix the flaky test');
    expect(JSON.stringify(lCtx)).not.toContain('laptop: add a benchmark');
    // The other branch stays reachable: checkout continues from it on either machine, and sync carries that too.
    const laptopTip = entries.find((e) => (e.message as { content?: string })?.content === 'laptop: add a benchmark')!;
    await desktop.ok(['checkout', id, String(laptopTip.id), '--json']);
    await desktop.ok(['sync', '--json']);
    await laptop.ok(['sync', '--json']);
    expect(JSON.stringify(await laptop.ok(['context', id, '--json']))).toContain('laptop: add a benchmark');
    expect((await laptop.ok(['tree', id, '--json'])).leafId).toBe((await desktop.ok(['tree', id, '--json'])).leafId);

    // A third machine with the repository elsewhere pulls everything and resumes.
    const third = new Machine(rig.root, 'third', { remote: 'ssh://git@GitHub.com/Acme/App.git' });
    await third.login(rig.server);
    await desktop.ok(['push', '--json']);
    const all = await third.ok(['pull', '--all', '--json']);
    expect(all.createdSessions).toBe(1);
    const tFile = third.fileOf(id);
    expect(readLog(tFile).header.cwd).toBe(third.project);
    expect([...entrySet(tFile).entries()].sort()).toEqual([...entrySet(desktop.fileOf(id)).entries()].sort());
    const resumed = await third.ok(['resume', id.slice(0, 13), '--json']);
    expect(resumed).toBeTruthy();
    expect(await third.ok(['context', id, '--json'])).toEqual(await desktop.ok(['context', id, '--json']));
  }, 120_000);

  it('status shows what is unpushed and what waits on the server; a no-op sync costs one request', async () => {
    const R = 'git@example.org:team/status.git';
    const { a: m1, b: m2, id } = await pairWithSession(rig.root, ['status-1', 'status-2'], [R, R], rig.server, 'one', 'two', 'three');
    let st = await m1.ok(['status', '--json']);
    expect(st.sessions).toEqual([expect.objectContaining({ session: id, unpushedEntries: 3, waitingBatches: 0 })]);
    await m1.ok(['push', '--json']);
    st = await m2.ok(['status', '--all', '--json']);
    expect(st.sessions.find((s: { session: string }) => s.session === id)).toMatchObject({ remoteOnly: true, waitingBatches: 1 });
    await m2.ok(['sync', '--json']);
    const noop = await m2.ok(['sync', '--json']);
    expect(noop).toMatchObject({ requests: 1, pushedEntries: 0, pulledEntries: 0 });
    const pushNoop = await m1.ok(['push', '--json']);
    expect(pushNoop.requests).toBe(0);
  }, 60_000);
});

describe('login and error messages', () => {
  it('tells a wrong server, a bad token and an unreachable server apart', async () => {
    const root = tempDir('sessync-login-');
    const http = await import('node:http');
    const other = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>hello</html>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    const server = await startNodeServer();
    try {
      const m = new Machine(root.dir, 'm');
      const port = (other.address() as { port: number }).port;
      const wrong = await m.run(['login', `http://127.0.0.1:${port}`, '--token', 'x', '--json']);
      expect(wrong.code).toBe(1);
      expect(JSON.parse(wrong.stderr).error.code).toBe('wrong_server');
      const bad = await m.run(['login', server.url, '--token', 'sst_not-a-token', '--json']);
      expect(JSON.parse(bad.stderr).error.code).toBe('unauthorized');
      await server.stop();
      const down = await m.run(['login', server.url, '--token', server.token, '--json']);
      expect(JSON.parse(down.stderr).error).toMatchObject({ code: 'unavailable', retryable: true });
      const notLogged = await m.run(['push', '--json']);
      expect(JSON.parse(notLogged.stderr).error.code).toBe('unauthorized');
      // Local commands never need the network.
      const id = await m.newSession();
      expect((await m.run(['list', '--json'])).code).toBe(0);
      // Not logged in: no server's record to count pushes against, so no count is claimed.
      const st = await m.ok(['status', '--json']);
      expect(st).toMatchObject({ loggedIn: false, serverChecked: false });
      expect(st.sessions).toEqual([expect.objectContaining({ session: id, unpushedEntries: null, waitingBatches: null })]);
    } finally {
      other.close();
      await server.stop();
      server.cleanup();
      root.cleanup();
    }
  }, 60_000);
});
