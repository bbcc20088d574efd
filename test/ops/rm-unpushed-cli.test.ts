// `sessync rm <ref>` without --remote never deletes entries no server has unless told to (--force): real CLI processes,
// a real `sessync serve`; refused, the file stays byte for byte and the error says how many entries and what to run.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, syncedPair, tempDir, useServer } from '../sync/helpers.js';

const remote = (name: string) => `git@github.com:acme/rm-unpushed-${name}.git`;

/** The last stderr line of a failed --json run: its error. */
function errorOf(r: { stderr: string }): { code: string; message: string; retryable: boolean; details?: any } {
  return JSON.parse(r.stderr.trim().split('\n').pop()!).error;
}

describe('rm refuses to lose unpushed entries (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-rmunpushed-');

  it('entries appended since the last push: refused with their count and what to run; after a sync rm goes, restore brings all', async () => {
    const a = new Machine(rig.root, 'late', { remote: remote('late') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['sync', '--json']);
    await a.say(id, 'three');
    const file = a.fileOf(id);
    const before = readFileSync(file);

    const r = await a.run(['rm', id, '--json']);
    expect(r.code).toBe(1);
    const err = errorOf(r);
    expect(err).toMatchObject({ code: 'conflict', retryable: false, details: { session: id, path: file, unpushed: 1 } });
    expect(err.message).toContain('1 entry');
    expect(err.message).toContain(`sessync push ${id}`);
    expect(err.message).toContain(`sessync rm ${id} --force`);
    expect(readFileSync(file).equals(before)).toBe(true);
    const human = await a.run(['rm', id]);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('not pushed');

    await a.ok(['sync', '--json']);
    expect(await a.ok(['rm', id, '--json'])).toMatchObject({ session: id, deletedHere: true, lost: 0 });
    expect(existsSync(file)).toBe(false);
    await a.ok(['restore', id, '--json']);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('logged in, never pushed: refused; --force deletes it and says the entries are gone for good', async () => {
    const a = new Machine(rig.root, 'fresh', { remote: remote('fresh') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    const file = a.fileOf(id);
    const r = await a.run(['rm', id, '--json']);
    expect(r.code).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'conflict', details: { unpushed: 2 } });
    expect(errorOf(r).message).toContain('2 entries');
    expect(existsSync(file)).toBe(true);

    const out = await a.ok(['rm', id, '--force']);
    expect(out).toContain(`removed ${file}`);
    expect(out).toContain('2 entries');
    expect(out).toContain('gone for good');
    expect(existsSync(file)).toBe(false);
  });

  it('entries pulled from another machine need no push: rm goes without --force', async () => {
    const { a, b, id } = await syncedPair(rig.root, ['pulled-a', 'pulled-b'], remote('pulled'), rig.server, 'one');
    await b.say(id, 'from b');
    await b.ok(['sync', '--json']);
    expect(await a.ok(['pull', '--json'])).toMatchObject({ pulledEntries: 1 });
    expect(await a.ok(['rm', id, '--json'])).toMatchObject({ session: id, deletedHere: true, lost: 0 });
    expect(await a.ok(['restore', id, '--json'])).toMatchObject({ restored: [{ session: id, pulled: { entries: 2 } }] });
    expect(entrySet(a.fileOf(id))).toEqual(entrySet(b.fileOf(id)));
  });

  it('not logged in, never synced: refused (its file is the only copy); --force deletes it, and says it cannot come back', async () => {
    const dir = tempDir('sessync-rmunpushed-solo-');
    try {
      const m = new Machine(dir.dir, 'solo');
      const id = await m.newSession();
      await m.say(id, 'only here');
      const file = m.fileOf(id);
      const before = readFileSync(file);
      const r = await m.run(['rm', id, '--json']);
      expect(r.code).toBe(1);
      const err = errorOf(r);
      expect(err).toMatchObject({ code: 'conflict', retryable: false, details: { unpushed: 1 } });
      expect(err.message).toContain('not logged in');
      expect(err.message).toContain('--force');
      expect(readFileSync(file).equals(before)).toBe(true);

      const forced = await m.ok(['rm', id, '--force', '--json']);
      expect(forced).toMatchObject({ session: id, deletedHere: false, lost: 1 });
      expect(existsSync(file)).toBe(false);
      const other = await m.newSession();
      await m.say(other, 'a', 'b');
      const text = await m.ok(['rm', other, '--force']);
      expect(text).toContain('2 entries not pushed to any server are gone for good');
      expect(text).toContain('`sessync restore` cannot bring it back');
    } finally {
      dir.cleanup();
    }
  });

  it('lines no push sends (over the entry limit, no newline yet) count as lost: refused, before and after a sync passed over them', async () => {
    const a = new Machine(rig.root, 'never-sent', { remote: remote('never-sent') });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one');
    const file = a.fileOf(id);
    const last = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').pop()!).id as string;
    const big = { type: 'message', id: 'big00001', parentId: last, timestamp: '2026-12-03T07:40:00.000Z', message: { role: 'user', content: 'x'.repeat(5 * 1024 * 1024), timestamp: 1 } };
    appendFileSync(file, JSON.stringify(big) + '\n');
    await a.ok(['sync', '--json']); // pushes "one"; the big line is reported and passed over (its offset moves on)
    const r = await a.run(['rm', id, '--json']);
    expect(r.code).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'conflict', details: { unpushed: 1 } });
    expect(errorOf(r).message).toContain('no server will take it');
    expect(existsSync(file)).toBe(true);

    // A complete entry with no newline after it: a push waits for its end, rm must not take it silently.
    const torn = { type: 'message', id: 'torn0001', parentId: last, timestamp: '2026-12-03T07:41:00.000Z', message: { role: 'user', content: 'not ended', timestamp: 2 } };
    appendFileSync(file, JSON.stringify(torn));
    const r2 = await a.run(['rm', id, '--json']);
    expect(r2.code).toBe(1);
    expect(errorOf(r2)).toMatchObject({ details: { unpushed: 2 } });
    expect(await a.ok(['rm', id, '--force', '--json'])).toMatchObject({ session: id, lost: 2 });
    expect(existsSync(file)).toBe(false);
  });

  it('a session another machine deleted on the server: rm (which sync names for it) removes the copy without --force and says so', async () => {
    const { a, b, id } = await syncedPair(rig.root, ['tomb-a', 'tomb-b'], remote('tomb'), rig.server, 'one', 'two');
    await b.ok(['rm', id, '--remote', '--json']);
    await a.ok(['sync', '--json']);
    const file = a.fileOf(id);
    expect(existsSync(file)).toBe(true);
    // Logged out, that server's mark does not decide: the entries may be bound for another server, so rm refuses.
    await a.ok(['logout', '--json']);
    const refused = await a.run(['rm', id, '--json']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(errorOf(refused).code).toBe('conflict');
    expect(existsSync(file)).toBe(true);
    await a.login(rig.server);
    const out = await a.ok(['rm', id, '--json']);
    expect(out).toMatchObject({ session: id, remote: false, deletedOnServer: { at: expect.any(String) } });
    expect(existsSync(file)).toBe(false);
  });

  it('the help says when rm refuses and what --force does', async () => {
    const dir = tempDir('sessync-rmunpushed-help-');
    try {
      const help = await new Machine(dir.dir, 'help').ok(['rm', '--help']);
      expect(help).toContain('--force');
      expect(help).toContain('not pushed');
    } finally {
      dir.cleanup();
    }
  });
});
