// A pull killed after it appended entries and before its leaf marker, pulled again with nothing new: the marker comes then.
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';
import { runUntilKilled } from './kill-rig.js';

const REMOTE = 'git@github.com:acme/killed-leaf.git';

describe('a pull killed before its leaf marker', () => {
  const rig = useServer(undefined, 'sessync-killed-leaf-');

  it('the pull again, which appends nothing, still makes pi\'s leaf (the last line) sessync\'s leaf', async () => {
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'root');
    await a.ok(['push', '--json']);
    await b.ok(['pull', '--json']);
    const root = readLog(b.fileOf(id)).ids.at(-1)!;
    // Two siblings under the root: a's is older, b's (local, the newest tip) newer. b's pull appends a's last.
    await a.say(id, 'older, from a');
    await a.ok(['push', '--json']);
    await b.say(id, 'newer, from b');
    const mine = readLog(b.fileOf(id)).ids.at(-1)!;

    const run = await runUntilKilled(b, ['pull'], 'pull-aligning:1');
    expect(run.signal, run.err).toBe('SIGKILL');
    const killed = readLog(b.fileOf(id));
    expect(killed.entries.at(-1)!.parentId, 'the kill came after the append: a\'s entry is the last line').toBe(root);

    // Pulled again: a's entry is there already (a duplicate, nothing appended), and the leaves still differ.
    await b.ok(['pull', '--json']);
    const log = readLog(b.fileOf(id));
    expect(log.ids.filter((x) => x === killed.ids.at(-1))).toHaveLength(1);
    const last = log.entries.at(-1)!;
    expect(last.customType, 'a checkout marker went last').toBe('sessync.checkout');
    expect(last.parentId, 'under the newest tip, b\'s entry').toBe(mine);
    // And it is not made twice.
    await b.ok(['pull', '--json']);
    expect(readLog(b.fileOf(id)).entries).toHaveLength(log.entries.length);
  }, 120_000);
});
