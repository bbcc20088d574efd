// pi's two folders: sessions in pi's own folder and in sessync's store beside it sync as one set, each known by its id;
// pi's own sessionDir choice ($PI_CODING_AGENT_SESSION_DIR, `sessionDir` in its settings) is followed, flat as pi keeps it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Machine, readLog, useServer } from '../sync/helpers.js';
import { chatText, startFakeModelApi, type FakeModelApi } from '../pi/fake-model-api.js';
import { PI_CLI, PiAgent } from '../pi/pi-cli.js';


describe("pi's folder and sessync's own store, synced as one", () => {
  const rig = useServer(undefined, 'sessync-pi-both-');
  let api: FakeModelApi;
  beforeAll(async () => {
    api = await startFakeModelApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A machine whose HOME may hold pi's folder; sessync is given no sessions folder. */
  function machine(name: string, extra: Record<string, string | undefined> = {}, remote = `git@github.com:acme/pi-both-${name}.git`): { m: Machine; home: string; agentDir: string } {
    const home = join(rig.root, name, 'user');
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, PI_CODING_AGENT_DIR: undefined, PI_CODING_AGENT_SESSION_DIR: undefined, SESSYNC_SESSIONS_DIR: undefined, ...extra } as unknown as Record<string, string>;
    return { m: new Machine(rig.root, name, { remote, env }), home, agentDir: join(home, '.pi', 'agent') };
  }
  const own = (m: Machine) => join(m.home, 'sessions');
  const ids = (log: { ids: string[] }) => log.ids;

  it('sessions in either folder are pushed once, none counts as deleted, and a new one pulled lands in pi\'s folder', async () => {
    const A = machine('a');
    await A.m.login(rig.server);
    // Before pi is set up: a session in sessync's own store, synced.
    const old = await A.m.newSession();
    await A.m.say(old, 'from the store');
    expect(await A.m.ok(['sync', '--json'])).toMatchObject({ pushedSessions: 1, failed: 0 });
    // pi set up afterwards: a new session goes to pi's folder; the old one stays where it is and keeps syncing.
    mkdirSync(A.agentDir, { recursive: true });
    const fresh = await A.m.newSession();
    await A.m.say(fresh, 'from pi\'s folder');
    await A.m.say(old, 'more in the store');
    expect(A.m.fileOf(fresh, join(A.agentDir, 'sessions'))).toBeTruthy();
    const r = await A.m.run(['sync', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ pushedSessions: 2, pushedEntries: 2, failed: 0, deleted: [] });
    expect(r.stderr).not.toMatch(/deleted here|are not/);
    const listed = (await A.m.ok(['list', '--json'])) as { id: string }[];
    expect(listed.map((s) => s.id).sort()).toEqual([old, fresh].sort());
    const st = (await A.m.ok(['status', '--json'])) as { sessions: { session: string }[] };
    expect(st.sessions.map((s) => s.session).sort()).toEqual([old, fresh].sort());
    // Nothing left to push, and nothing copied from one folder into the other.
    expect(await A.m.ok(['sync', '--json'])).toMatchObject({ pushedSessions: 0, pulledSessions: 0, createdSessions: 0 });
    expect(A.m.sessionFiles(own(A.m)).map((p) => basename(p))).toEqual([basename(A.m.fileOf(old, own(A.m)))]);
    expect(A.m.sessionFiles(join(A.agentDir, 'sessions'))).toHaveLength(1);

    // B has pi and a store of its own: both sessions, new here, land in pi's folder.
    const B = machine('b', {}, 'git@github.com:acme/pi-both-a.git');
    mkdirSync(B.agentDir, { recursive: true });
    mkdirSync(own(B.m), { recursive: true });
    await B.m.login(rig.server);
    expect(await B.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 2, failed: 0 });
    for (const id of [old, fresh]) expect(B.m.fileOf(id, join(B.agentDir, 'sessions')).startsWith(join(B.agentDir, 'sessions'))).toBe(true);
    expect(B.m.sessionFiles(own(B.m))).toEqual([]);

    // A ref finds a session in either folder.
    await A.m.say(old, 'by ref');
    const one = await A.m.run(['push', old.slice(-8), '--json']);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ failed: 0, pushedEntries: 1, sessions: [{ session: old, path: A.m.fileOf(old, own(A.m)) }] });
  }, 90_000);

  it('a session copied into both folders is reported and synced once, from the newer file, nothing lost', async () => {
    const C = machine('c');
    await C.m.login(rig.server);
    const id = await C.m.newSession();
    await C.m.say(id, 'one');
    await C.m.ok(['sync', '--json']);
    // The user sets pi up and copies the file into pi's folder, then pi (here: sessync append) writes on there.
    mkdirSync(C.agentDir, { recursive: true });
    const was = C.m.fileOf(id, own(C.m));
    const copy = join(C.agentDir, 'sessions', basename(dirname(was)), basename(was));
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(was, copy);
    const line = { type: 'message', id: 'c0ffee01', parentId: readLog(was).ids.at(-1), timestamp: new Date(Date.now() + 60_000).toISOString(), message: { role: 'user', content: 'two, in the copy' } };
    appendFileSync(copy, JSON.stringify(line) + '\n');
    const before = readFileSync(was, 'utf8');

    const r = await C.m.run(['sync', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { pushedEntries: number; failed: number; sessions: { session: string; path?: string }[]; skippedFiles: { path: string; reason: string }[] };
    expect(out).toMatchObject({ pushedEntries: 1, failed: 0 });
    expect(out.skippedFiles).toEqual([{ path: was, reason: expect.stringContaining(`also in ${copy}`) }]);
    const said = await C.m.run(['status']);
    expect(said.stderr + said.stdout).toContain(`skipped ${was}: session ${id} is also in ${copy}`);
    expect(readFileSync(was, 'utf8')).toBe(before); // the older copy is left as it is
    const listed = (await C.m.ok(['list', '--json'])) as { id: string; path: string }[];
    expect(listed).toEqual([expect.objectContaining({ id, path: copy })]);

    const D = machine('d', {}, 'git@github.com:acme/pi-both-c.git');
    await D.m.login(rig.server);
    expect(await D.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    const got = readLog(D.m.fileOf(id, own(D.m)));
    expect(ids(got)).toEqual(readLog(copy).ids);
    expect(new Set(ids(got)).size).toBe(ids(got).length);
  }, 90_000);

  it("a fork pulled into pi's folder names its parent's file in sessync's own store", async () => {
    const A = machine('l');
    const B = machine('m', {}, 'git@github.com:acme/pi-both-l.git');
    await A.m.login(rig.server);
    await B.m.login(rig.server);
    const parent = await A.m.newSession();
    await A.m.say(parent, 'parent');
    await A.m.ok(['sync', '--json']);
    await B.m.ok(['sync', '--json']); // B has the parent in its own store, then sets pi up
    mkdirSync(B.agentDir, { recursive: true });
    const fork = (await A.m.ok(['fork', parent, '--json'])) as { id: string };
    await A.m.ok(['sync', '--json']);
    expect(await B.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    const header = readLog(B.m.fileOf(fork.id, join(B.agentDir, 'sessions'))).header;
    expect(header.parentSession).toBe(B.m.fileOf(parent, own(B.m)));
  }, 60_000);

  it('--sessions-dir still means exactly one folder', async () => {
    const E = machine('e');
    mkdirSync(E.agentDir, { recursive: true });
    const inPi = await E.m.newSession();
    const only = join(E.m.home, 'sessions');
    mkdirSync(only, { recursive: true }); // a named sessions folder must exist
    const r = await E.m.run(['list', '--all', '--json', '--sessions-dir', only]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(((await E.m.ok(['list', '--json'])) as { id: string }[]).map((s) => s.id)).toEqual([inPi]);
  });

  it("an unreadable pi settings file is reported, pi's default folder used, nothing lost", async () => {
    for (const [name, bad] of [
      ['f', (p: string) => writeFileSync(p, '{"sessionDir": ')],
      ['g', (p: string) => mkdirSync(p)], // a folder where the file should be: cannot be read (EISDIR), even as root
    ] as const) {
      const F = machine(name);
      mkdirSync(F.agentDir, { recursive: true });
      bad(join(F.agentDir, 'settings.json'));
      await F.m.login(rig.server);
      const id = await F.m.newSession();
      await F.m.say(id, 'kept');
      expect(F.m.fileOf(id, join(F.agentDir, 'sessions'))).toBeTruthy();
      const r = await F.m.run(['sync']);
      expect(r.code, r.stderr).toBe(0);
      expect(await F.m.ok(['status', '--json'])).toMatchObject({ sessions: [{ session: id, path: F.m.fileOf(id, join(F.agentDir, 'sessions')) }] });
      expect(r.stderr).toContain(`pi's settings ${join(F.agentDir, 'settings.json')}`);
      expect(r.stderr).toContain("using pi's default sessions folder");
      expect(existsSync(join(F.agentDir, 'settings.json'))).toBe(true);
    }
  }, 60_000);

  it("PI_CODING_AGENT_SESSION_DIR: sessions are read from and pulled into that folder, flat, as pi keeps them", async () => {
    const G = machine('h');
    await G.m.login(rig.server);
    const id = await G.m.newSession();
    await G.m.say(id, 'to the flat folder');
    await G.m.ok(['sync', '--json']);
    const flat = join(rig.root, 'i', 'flat-sessions');
    mkdirSync(flat, { recursive: true });
    const H = machine('i', { PI_CODING_AGENT_SESSION_DIR: flat }, 'git@github.com:acme/pi-both-h.git');
    await H.m.login(rig.server);
    expect(await H.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    const names = readdirSync(flat);
    expect(names).toEqual([expect.stringMatching(new RegExp(`_${id}\\.jsonl$`))]);
    expect(((await H.m.ok(['list', '--json'])) as { id: string }[]).map((s) => s.id)).toEqual([id]);
    expect(await H.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 0, pushedSessions: 0, failed: 0 });
  }, 60_000);

  it("pi's sessionDir setting (with ~): the real pi resumes the pulled session from there with A's messages", async (ctx) => {
    if (!existsSync(PI_CLI)) {
      const msg = `the pi CLI is not installed at ${PI_CLI}: run npm ci; this test cannot run`;
      console.error(`\n!!! ${msg}\n`);
      if (process.env.CI === 'true') throw new Error(msg);
      ctx.skip();
    }
    const A = machine('j');
    const piA = new PiAgent(A.home, api.baseUrl);
    await A.m.login(rig.server);
    const id = await piA.start(A.m.project, 'hello from A');
    expect(await A.m.ok(['sync', '--json'])).toMatchObject({ pushedSessions: 1, failed: 0 });

    const B = machine('k', {}, 'git@github.com:acme/pi-both-j.git');
    const piB = new PiAgent(B.home, api.baseUrl);
    writeFileSync(join(piB.agentDir, 'settings.json'), JSON.stringify({ sessionDir: '~/my-pi-sessions' }));
    mkdirSync(join(B.home, 'my-pi-sessions'));
    await B.m.login(rig.server);
    expect(await B.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    const file = join(B.home, 'my-pi-sessions', readdirSync(join(B.home, 'my-pi-sessions'))[0]!);
    expect(file.endsWith(`_${id}.jsonl`)).toBe(true);
    await piB.turn(B.m.project, id, 'continue on B');
    const convo = api.requests.at(-1)!.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${chatText(m)}`);
    expect(convo.slice(0, 1).concat(convo.slice(2))).toEqual(['user: hello from A', 'user: continue on B']);
    // pi wrote its turn in the same file, and it goes back.
    expect(readFileSync(file, 'utf8')).toContain('continue on B');
    expect(await B.m.ok(['sync', '--json'])).toMatchObject({ pushedSessions: 1, failed: 0 });
  }, 120_000);
});
