// A session pulled new (a fresh machine's first pull, a restore) whose batches come from three hosts over several pull
// pages: its file is written parents first, whatever order the pages bring the hosts' batch chains in.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/wire.js';
import { chatText, startFakeModelApi, type FakeModelApi } from '../pi/fake-model-api.js';
import { PI_CLI, PiAgent } from '../pi/pi-cli.js';
import { piView, plain, sessyncView } from '../pi/pi-view.js';
import { Machine, childrenBeforeParents, readLog, useServer } from './helpers.js';
import { runUntilKilled } from './kill-rig.js';

const REMOTE = 'git@github.com:acme/parents-first.git';
/** More one-entry batches per host than a pull page carries: every page ends inside some host's chain. */
const RUN = LIMITS.maxBatchesPerPull + 5;

/** Parents first, each entry once, the newest tip last, and pi (its own SessionManager) resumes it where sessync does. */
async function expectWrittenInOrder(m: Machine, id: string, count: number, what: string, root?: string): Promise<void> {
  const file = m.fileOf(id, root);
  const log = readLog(file);
  expect(new Set(log.ids).size, `${what}: each entry once`).toBe(log.ids.length);
  expect(childrenBeforeParents(file), `${what}: entries written before their parent`).toEqual([]);
  expect(log.ids.length, `${what}: no leaf marker was needed`).toBe(count);
  const pi = plain(piView(file));
  expect(plain(await sessyncView(file)), `${what}: pi and sessync resume the same branch`).toEqual(pi);
  expect(log.ids.at(-1), `${what}: the last line is the leaf`).toBe(pi.leafId);
}

describe('a session pulled new over several pages from three hosts', () => {
  const rig = useServer(undefined, 'sessync-parents-first-');
  let api: FakeModelApi;
  beforeAll(async () => {
    api = await startFakeModelApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is written parents first: a fresh machine\'s pull, and a restore', async () => {
    const env = { SESSYNC_SYNC_BATCH_BYTES: '1' }; // one entry a batch
    const a = new Machine(rig.root, 'a', { remote: REMOTE, env });
    const b = new Machine(rig.root, 'b', { remote: REMOTE, env });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    // a's chain, then b's on top of it, then a's again on top of b's: each host's batches need the other's before
    // them, so whichever host the server serves first, a page holds entries whose parents come on a later page.
    await a.say(id, ...Array.from({ length: RUN }, (_, i) => `a ${i}`));
    await a.ok(['push', '--json']);
    await b.ok(['pull', '--json']);
    await b.say(id, ...Array.from({ length: RUN }, (_, i) => `b ${i}`));
    await b.ok(['push', '--json']);
    await a.ok(['pull', '--json']);
    await a.say(id, ...Array.from({ length: 3 }, (_, i) => `a again ${i}`));
    await a.ok(['push', '--json']);
    // A third host, whose first pull is of two hosts' chains, continues it; a takes its entries too.
    const e = new Machine(rig.root, 'e', { remote: REMOTE, env });
    await e.login(rig.server);
    await e.ok(['pull', '--json']);
    expect(childrenBeforeParents(e.fileOf(id)), 'e\'s first pull').toEqual([]);
    await e.say(id, ...Array.from({ length: RUN }, (_, i) => `e ${i}`));
    await e.ok(['push', '--json']);
    await a.ok(['pull', '--json']);
    const count = readLog(a.fileOf(id)).ids.length;
    expect(childrenBeforeParents(a.fileOf(id)), 'the file written here, line by line').toEqual([]);

    // c keeps its sessions in pi's folder, so the real pi CLI can resume what the pull wrote.
    const pi = new PiAgent(join(rig.root, 'c', 'pi-home'), api.baseUrl);
    const c = new Machine(rig.root, 'c', { remote: REMOTE, env: { SESSYNC_SESSIONS_DIR: pi.sessionsDir } });
    await c.login(rig.server);
    expect(await c.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: count });
    await expectWrittenInOrder(c, id, count, 'a fresh machine\'s first pull', pi.sessionsDir);
    if (!existsSync(PI_CLI)) console.warn(`pi's CLI is not installed (${PI_CLI}): its resume of the pulled session is not checked`);
    else {
      await pi.turn(c.project, id, 'continue on c');
      const said = api.requests.at(-1)!.messages.filter((m) => m.role === 'user').map((m) => chatText(m));
      const want = [...Array.from({ length: RUN }, (_, i) => `a ${i}`), ...Array.from({ length: RUN }, (_, i) => `b ${i}`), 'a again 0', 'a again 1', 'a again 2', ...Array.from({ length: RUN }, (_, i) => `e ${i}`), 'continue on c'];
      expect(said, 'the history pi sends the model, resumed from the pulled file').toEqual(want);
    }

    // a deletes its copy and brings it back from the server: every host's batches, its own too.
    await a.ok(['rm', id, '--json']);
    await a.ok(['restore', id, '--json']);
    await expectWrittenInOrder(a, id, count, 'a restore');
    // Nothing was needed to align the leaf, and nothing goes back to the server as a's own.
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });

    // Killed after each of the first pages' entries were written (their cursors not saved), then run again: the
    // entries that waited for a parent came again, and the file is the same.
    for (const n of [1, 2, 3]) {
      const d = new Machine(rig.root, `d${n}`, { remote: REMOTE });
      await d.login(rig.server);
      const run = await runUntilKilled(d, ['pull'], `pull-merged:${n}`);
      expect(run.signal, run.err).toBe('SIGKILL');
      expect(await d.ok(['pull', '--json'])).toMatchObject({ failed: 0 });
      await expectWrittenInOrder(d, id, count, `a first pull killed after page ${n}, then run again`);
      expect(await d.ok(['sync', '--json']), `after the kill after page ${n}`).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    }
    // And a restore killed so: the next sync pulls it again before it pushes, and sends nothing back as a's own.
    await a.ok(['rm', id, '--json']);
    const run = await runUntilKilled(a, ['restore', id], 'pull-merged:2');
    expect(run.signal, run.err).toBe('SIGKILL');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, failed: 0 });
    await expectWrittenInOrder(a, id, count, 'a restore killed after its second page, then a sync');
  }, 240_000);
});
