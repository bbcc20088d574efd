// A fresh machine pulls a session whose first host's chain hangs from a parent the server never had, over several
// pull pages: the orphan's chain is written once, and the second host's entries after their parent on it.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/wire.js';
import { piView, plain, sessyncView } from '../pi/pi-view.js';
import { Machine, childrenBeforeParents, machineWithHost, readLog, useServer } from './helpers.js';
import { runUntilKilled } from './kill-rig.js';

const env = { SESSYNC_SYNC_BATCH_BYTES: '1' }; // one entry a batch
/** Entries on the orphan after it: its chain ends on the second page of host a's batches. */
const ON_ORPHAN = LIMITS.maxBatchesPerPull + 5;

const texts = (path: string) => readLog(path).entries.map((e) => (e.message as { content?: string } | undefined)?.content ?? e.type);

describe('a pull of a session with an orphan chain on the host served first', () => {
  const rig = useServer(undefined, 'sessync-orphan-order-');

  // b's 3 entries come whole on page 2; with more than a page of them, b too waits unread when only a and b are left.
  it.each([
    ['a few entries', 3],
    ['more than a page of entries', LIMITS.maxBatchesPerPull + 5],
  ])('writes the orphan chain once and the other host\'s entries after their parent, with no leaf marker (b adds %s)', async (name, onA) => {
    const box = join(rig.root, name.replaceAll(' ', '-'));
    const REMOTE = `git@github.com:acme/orphan-order-${onA}.git`; // a project of its own: c pulls this session only
    const a = machineWithHost(box, 'a', 'host-a', { remote: REMOTE, env });
    const b = machineWithHost(box, 'b', 'host-b', { remote: REMOTE, env });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'a 0');
    // a's second entry names a parent the server never had (as an old file, or one that lost a line, does), and the
    // rest of a's chain hangs from it; written as lines, since `append` refuses a parent the session lacks.
    const orphan = randomUUID();
    const chain = [{ id: orphan, parentId: randomUUID(), text: 'a 1' }];
    for (let i = 0; i < ON_ORPHAN; i++) chain.push({ id: randomUUID(), parentId: chain.at(-1)!.id, text: `a ${i + 2}` });
    const t0 = Date.now() + 1000;
    appendFileSync(a.fileOf(id), chain.map((c, i) => JSON.stringify({ type: 'message', id: c.id, parentId: c.parentId, timestamp: new Date(t0 + i).toISOString(), message: { role: 'user', content: c.text } }) + '\n').join(''));
    await a.ok(['push', '--json']);
    // b continues from a's last entry.
    await b.ok(['pull', '--json']);
    const bTexts = Array.from({ length: onA }, (_, i) => `b ${i}`);
    await b.say(id, ...bTexts);
    await b.ok(['push', '--json']);
    const bFile = readLog(b.fileOf(id));
    const b0 = bFile.entries.find((e) => (e.message as { content?: string } | undefined)?.content === 'b 0')!;
    expect(b0.parentId, 'b\'s entries hang from a\'s last one').toBe(chain.at(-1)!.id);
    const count = bFile.ids.length;
    const want = ['a 0', ...chain.map((c) => c.text), ...bTexts];

    /** In order: each entry once, only the orphan before its (missing) parent, b's last entry the last line (no marker). */
    const expectInOrder = async (m: Machine, what: string): Promise<void> => {
      const file = m.fileOf(id);
      const log = readLog(file);
      expect(new Set(log.ids).size, `${what}: each entry once`).toBe(log.ids.length);
      expect(childrenBeforeParents(file), `${what}: entries written before their parent`).toEqual([orphan]);
      expect(texts(file), `${what}: the lines`).toEqual(want);
      expect(log.ids.length, `${what}: no leaf marker was needed`).toBe(count);
      const pi = plain(piView(file));
      expect(plain(await sessyncView(file)), `${what}: pi and sessync resume the same branch`).toEqual(pi);
      expect(pi.leafId, `${what}: pi resumes at b's last entry`).toBe(log.ids.at(-1));
    };

    const c = new Machine(box, 'c', { remote: REMOTE });
    await c.login(rig.server);
    expect(await c.ok(['pull', '--json'])).toMatchObject({ createdSessions: 1, pulledEntries: count, failed: 0 });
    await expectInOrder(c, 'a fresh machine\'s first pull');
    expect(await c.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });

    // Killed after each page's entries were written (their cursor not saved), then run again: the same file.
    for (const n of [1, 2, 3]) {
      const d = new Machine(box, `d${n}`, { remote: REMOTE });
      await d.login(rig.server);
      const run = await runUntilKilled(d, ['pull'], `pull-merged:${n}`);
      expect(run.signal, run.err).toBe('SIGKILL');
      expect(await d.ok(['pull', '--json'])).toMatchObject({ failed: 0 });
      await expectInOrder(d, `a first pull killed after page ${n}, then run again`);
      expect(await d.ok(['sync', '--json']), `after the kill after page ${n}`).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
    }

    // b deletes its copy and brings it back: its own batches come too, after a's.
    await b.ok(['rm', id, '--json']);
    await b.ok(['restore', id, '--json']);
    await expectInOrder(b, 'a restore');
  }, 180_000);
});
