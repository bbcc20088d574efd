// pi's own folder by default: the real pi writes to ~/.pi/agent/sessions on A, `sessync sync` (no --sessions-dir)
// carries it, B (the project at another path) gets it where its pi looks, and pi resumes it there by id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Machine, readLog, useServer } from '../sync/helpers.js';
import { chatText, startFakeModelApi, type FakeModelApi } from '../pi/fake-model-api.js';
import { PI_CLI, PiAgent } from '../pi/pi-cli.js';

const REMOTE = 'git@github.com:acme/pi-home.git';
const convo = (r: { messages: { role: string; content: unknown }[] }) => r.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${chatText(m)}`);

describe("sessync finds pi's own folder from HOME or PI_CODING_AGENT_DIR", () => {
  const rig = useServer(undefined, 'sessync-pi-home-');
  let api: FakeModelApi;
  beforeAll(async () => {
    api = await startFakeModelApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A machine whose HOME holds pi's folder; sessync is given no sessions folder, and no pi variable unless `agentDir`. */
  function machine(name: string, remote: string, agentDir?: string): { m: Machine; pi: PiAgent; home: string } {
    const home = join(rig.root, name, 'user');
    const pi = new PiAgent(home, api.baseUrl);
    const env = { HOME: home, PI_CODING_AGENT_DIR: agentDir, SESSYNC_SESSIONS_DIR: undefined } as unknown as Record<string, string>;
    return { m: new Machine(rig.root, name, { remote, env }), pi, home };
  }

  it('a session pi wrote on A is resumed by id on B, from the folder pi itself uses, with A\'s messages', async (ctx) => {
    if (!existsSync(PI_CLI)) {
      const msg = `the pi CLI is not installed at ${PI_CLI}: run npm ci; this test cannot run`;
      console.error(`\n!!! ${msg}\n`);
      if (process.env.CI === 'true') throw new Error(msg);
      ctx.skip();
    }
    const A = machine('a', REMOTE);
    const B = machine('b', 'https://github.com/acme/pi-home');
    await A.m.login(rig.server);
    await B.m.login(rig.server);

    const id = await A.pi.start(A.m.project, 'hello from A');
    expect(await A.m.ok(['sync', '--json'])).toMatchObject({ pushedSessions: 1, failed: 0 });
    // list and status see pi's session in pi's folder, nothing in sessync's own store.
    const listed = (await A.m.ok(['list', '--json'])) as { id: string; path: string }[];
    expect(listed.map((s) => s.id)).toEqual([id]);
    expect(listed[0]!.path.startsWith(A.pi.sessionsDir)).toBe(true);
    expect(existsSync(join(A.m.home, 'sessions'))).toBe(false);
    expect(await A.m.ok(['status', '--json'])).toMatchObject({ sessions: [{ session: id }] });

    expect(await B.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    // Where pi puts a session of B's project: its folder for B's cwd, pi's own file name.
    const bFile = B.m.fileOf(id, B.pi.sessionsDir);
    const aFile = A.m.fileOf(id, A.pi.sessionsDir);
    expect(bFile).toBe(join(B.pi.sessionsDir, `--${B.m.project.slice(1).replace(/\//g, '-')}--`, aFile.slice(aFile.lastIndexOf('/') + 1)));
    expect(readLog(bFile).header.cwd).toBe(B.m.project);

    const onB = await B.pi.turn(B.m.project, id, 'continue on B');
    expect(onB.stdout).not.toMatch(/different project|Fork this session/);
    expect(convo(api.requests.at(-1)!)).toEqual(['user: hello from A', `assistant: reply ${api.requests.length - 1}`, 'user: continue on B']);
    // And back: A's pi continues with B's turn.
    await B.m.ok(['sync', '--json']);
    expect(await A.m.ok(['pull', '--json'])).toMatchObject({ pulledSessions: 1, failed: 0 });
    await A.pi.turn(A.m.project, id, 'back on A');
    expect(convo(api.requests.at(-1)!).slice(2, 5)).toEqual(['user: continue on B', `assistant: reply ${api.requests.length - 1}`, 'user: back on A']);
  }, 120_000);

  it('PI_CODING_AGENT_DIR wins over HOME; without pi set up, sessync keeps its own store', async () => {
    const dir = join(rig.root, 'c', 'elsewhere', 'agent');
    mkdirSync(dir, { recursive: true });
    const C = machine('c', REMOTE, dir);
    const made = (await C.m.ok(['new', '--json'])) as { id: string; path: string };
    expect(made.path.startsWith(join(dir, 'sessions'))).toBe(true);

    const noPi = join(rig.root, 'd', 'no-pi-here');
    const D = machine('d', REMOTE, noPi);
    const other = (await D.m.ok(['new', '--json'])) as { id: string; path: string };
    expect(other.path.startsWith(join(D.m.home, 'sessions'))).toBe(true);
    // pi set up afterwards: new sessions go to its folder, and the one in sessync's own store still syncs from there.
    mkdirSync(noPi, { recursive: true });
    await D.m.login(rig.server);
    expect(await D.m.ok(['sync', '--json'])).toMatchObject({ sessions: expect.arrayContaining([expect.objectContaining({ session: other.id, path: other.path, pushed: expect.anything() })]), failed: 0 });
    expect(((await D.m.ok(['new', '--json'])) as { path: string }).path.startsWith(join(noPi, 'sessions'))).toBe(true);
  });
});
