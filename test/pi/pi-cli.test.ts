// The real pi CLI as the client of a synced session: pi writes on machine A, sessync carries it through a real
// server, and pi on machine B (the project at another path) resumes it by id, without a prompt, sending A's
// messages to the model. Then concurrent pi turns on both machines + sync: both resume the same branch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Machine, readLog, useServer } from '../sync/helpers.js';
import { chatText, startFakeModelApi, type FakeModelApi } from './fake-model-api.js';
import { PI_CLI, PiAgent } from './pi-cli.js';
import { piView, plain, sessyncView } from './pi-view.js';

const REMOTE = 'git@github.com:acme/pi-cli.git';

/** The conversation a request carries (system prompt left out), as "role: text". */
const convo = (r: { messages: { role: string; content: unknown }[] }) => r.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${chatText(m)}`);

describe('the real pi CLI resumes what sessync synced', () => {
  const rig = useServer(undefined, 'sessync-pi-cli-');
  let api: FakeModelApi;
  let piRuns = false;
  beforeAll(async () => {
    api = await startFakeModelApi();
    piRuns = existsSync(PI_CLI);
  });
  afterAll(async () => {
    await api?.close();
  });

  function machine(name: string, remote: string): { m: Machine; pi: PiAgent } {
    const pi = new PiAgent(join(rig.root, name, 'pi-home'), api.baseUrl);
    // sessync works on pi's own folder, as a pi user runs it (--sessions-dir ~/.pi/agent/sessions).
    const m = new Machine(rig.root, name, { remote, env: { SESSYNC_SESSIONS_DIR: pi.sessionsDir } });
    return { m, pi };
  }

  it('pi runs here (headless, against the fake model API)', async () => {
    if (!piRuns) {
      const msg = `the pi CLI is not installed at ${PI_CLI}: run npm ci; the real-pi tests cannot run`;
      console.error(`\n!!! ${msg}\n`);
      if (process.env.CI === 'true') throw new Error(msg);
      return;
    }
    const { m, pi } = machine('probe', REMOTE);
    const r = await pi.run(m.project, ['-p', 'are you there?']);
    if (r.code !== 0) {
      const msg = `pi cannot run here (exit ${r.code}): ${r.stderr.slice(0, 500)}`;
      console.error(`\n!!! ${msg}\n`);
      if (process.env.CI === 'true') throw new Error(msg);
    }
    expect(r.code).toBe(0);
  });

  it('B resumes by id a session pi wrote on A, in its own project folder, with A\'s messages; concurrent turns end on one branch', async (ctx) => {
    if (!piRuns) ctx.skip();
    const A = machine('pi-a', REMOTE);
    const B = machine('pi-b', 'https://github.com/acme/pi-cli');
    await A.m.login(rig.server);
    await B.m.login(rig.server);

    const id = await A.pi.start(A.m.project, 'hello from A');
    const fromA = convo(api.requests.at(-1)!);
    expect(fromA).toEqual(['user: hello from A']);
    expect(await A.m.ok(['sync', '--json'])).toMatchObject({ pushedSessions: 1, failed: 0 });
    expect(await B.m.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });

    // Where pi looks for `--session <id>` first: its folder for the current directory. The pulled file is there,
    // with B's project as its cwd, so pi resumes it in place instead of offering to fork it from another project.
    const bFile = B.m.fileOf(id, B.pi.sessionsDir);
    expect(bFile.startsWith(join(B.pi.sessionsDir, `--${B.m.project.slice(1).replace(/\//g, '-')}--`))).toBe(true);
    expect(readLog(bFile).header.cwd).toBe(B.m.project);
    const onB = await B.pi.turn(B.m.project, id.slice(0, 13), 'continue on B');
    expect(onB.stdout).not.toMatch(/different project|Fork this session/);
    const asked = convo(api.requests.at(-1)!);
    expect(asked).toEqual(['user: hello from A', `assistant: reply ${api.requests.length - 1}`, 'user: continue on B']);
    expect(readLog(bFile).entries.length).toBeGreaterThan(readLog(A.m.fileOf(id, A.pi.sessionsDir)).entries.length);

    // Both machines up to date, then one pi turn on each, offline from each other: two branches.
    await B.m.ok(['sync', '--json']);
    await A.m.ok(['sync', '--json']);
    await A.pi.turn(A.m.project, id, 'A: concurrent turn');
    await B.pi.turn(B.m.project, id, 'B: concurrent turn');
    for (let round = 0; round < 2; round++) {
      await A.m.ok(['sync', '--json']);
      await B.m.ok(['sync', '--json']);
    }
    for (const x of [A, B]) expect(await x.m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });

    // pi's loader and sessync's agree on each machine, and the machines agree with each other.
    const files = [A.m.fileOf(id, A.pi.sessionsDir), B.m.fileOf(id, B.pi.sessionsDir)];
    const views = [];
    for (const f of files) {
      const pv = plain(piView(f));
      expect(plain(await sessyncView(f))).toEqual(pv);
      views.push(pv);
    }
    expect(views[1]).toEqual(views[0]);
    // And the real pi, resumed on each machine, sends the model the same history.
    await A.pi.turn(A.m.project, id, 'which branch?');
    const histA = convo(api.requests.at(-1)!);
    await B.pi.turn(B.m.project, id, 'which branch?');
    const histB = convo(api.requests.at(-1)!);
    expect(histB).toEqual(histA);
    expect(histA.filter((l) => l.includes('concurrent turn'))).toHaveLength(1); // one branch, not both
    expect(histA.slice(0, 3)).toEqual(asked);
  }, 180_000);
});
