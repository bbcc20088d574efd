// A SESSYNC_HOME copied to a second machine: the copy takes a new host id once, and both machines still get each other's entries.
import { describe, expect, it } from 'vitest';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Machine, entrySet, readLog, useServer } from './helpers.js';

const REMOTE = 'git@github.com:Acme/App.git';
const hostFile = (m: Machine) => JSON.parse(readFileSync(join(m.home, 'sync', 'host.json'), 'utf8')) as { hostId: string; copiedFrom?: string };
const texts = (path: string) => readLog(path).entries.filter((e) => e.type === 'message').map((e) => (e.message as { content: string }).content).sort();

describe('a copied SESSYNC_HOME', () => {
  const rig = useServer();

  it('pushes as a new host, pulls what the original pushes after the copy, and the original pulls the copy', async () => {
    const orig = new Machine(rig.root, 'orig', { remote: REMOTE });
    await orig.login(rig.server);
    const id = await orig.newSession();
    await orig.say(id, 'before the copy');
    await orig.ok(['sync', '--json']);
    const origHost = hostFile(orig).hostId;

    // A new laptop set up from a backup of the old one: the whole folder, login and sync state included,
    // and the project at the same path (both machines share one disk here, so the copy works in the
    // original's project folder; its sessions and state are its own copies).
    const copy = new Machine(rig.root, 'copy', { project: orig.project });
    cpSync(orig.home, copy.home, { recursive: true });
    expect(copy.fileOf(id)).not.toBe(orig.fileOf(id));

    await orig.say(id, 'from the original');
    await copy.say(id, 'from the copy');
    const first = await copy.run(['sync']); // human mode: notes go to stderr
    expect(first.code).toBe(0);
    // The state carried over: only the new entry goes up, and only the original's new one comes down.
    expect(first.stdout).toMatch(/pushed 1 entry\b/);

    await orig.ok(['sync', '--json']);
    // The copy's own entry is the newer tip, but it pulls the original's last: a checkout marker keeps pi's
    // leaf (the last line) on its tip, and goes up in the same run; the original then pulls it.
    expect(await copy.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 1, pushedEntries: 1 });
    expect(await orig.ok(['sync', '--json'])).toMatchObject({ pulledEntries: 1, pushedEntries: 0 });
    for (const m of [copy, orig]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });

    const want = ['before the copy', 'from the copy', 'from the original'];
    expect(texts(orig.fileOf(id))).toEqual(want);
    expect(texts(copy.fileOf(id))).toEqual(want);
    expect([...entrySet(orig.fileOf(id)).entries()].sort()).toEqual([...entrySet(copy.fileOf(id)).entries()].sort());
    for (const m of [orig, copy]) {
      const ids = readLog(m.fileOf(id)).ids;
      expect(new Set(ids).size).toBe(ids.length); // nothing pulled twice
    }
    expect(first.stderr).toContain('is a copy of another machine');
    expect(hostFile(copy)).toMatchObject({ copiedFrom: origHost });
    expect(hostFile(copy).hostId).not.toBe(origHost);
    expect(hostFile(orig).hostId).toBe(origHost);
    // The copy's later syncs keep its new id.
    const newId = hostFile(copy).hostId;
    await copy.ok(['sync', '--json']);
    expect(hostFile(copy).hostId).toBe(newId);
  });
});
