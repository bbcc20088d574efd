// A pull killed (kill -9) mid-way, then status / sync / push / pull in any order: the pulled entries are never pushed back as this machine's own.
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { headKey, runUntilKilled, storedIds } from './kill-rig.js';
import { CHECKOUT_CUSTOM_TYPE } from '../../shared/entry.js';

const SESSIONS = 20;
/** One entry a batch (small batch bytes): 90 batches a session, three pull pages of at most 40 batches each. */
const ENTRIES = 90;
/**
 * Kills in the pull: in the first round of pages (new files written, no state durable), in the second (files grown,
 * their cursors and pulled ids only in the journal's memory), and just after the journal's second flush.
 */
const POINTS = ['pull-merged:10', 'pull-merged:30', 'journal-synced:2'];
/** What the next run after the kill is: status, then each order of runs a user may take. */
const NEXT: string[][] = [['sync'], ['push'], ['pull', 'push']];


describe('an interrupted pull, then the next run', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-interrupt-');

  it(`a pull of ${SESSIONS} sessions killed at ${POINTS.length} points: status shows nothing to push, the next push/sync pushes 0 entries, the server gains no batch`, async () => {
    const remote = 'git@github.com:acme/pull-interrupt.git';
    const a = new Machine(rig.root, 'a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    await a.login(rig.server);
    const ids = Array.from({ length: SESSIONS }, (_, n) => plantSession(a, n, ENTRIES));
    await a.ok(['push', '--all', '--json']);
    const before = await headKey(rig.server);
    const stored = new Map<string, string[]>();
    for (const id of ids) stored.set(id, (await storedIds(rig.server, id)).sort());

    let n = 0;
    for (const point of POINTS) {
      for (const next of NEXT) {
        const b = new Machine(rig.root, `b${n++}`, { remote });
        await b.login(rig.server);
        const run = await runUntilKilled(b, ['pull', '--all'], point);
        expect(run.signal, `pull with ${point}: ${run.err}`).toBe('SIGKILL');
        const what = `killed at ${point}, then ${next.join(', ')}`;
        const st = (await b.ok(['status', '--all', '--json'])) as { sessions: { session: string; unpushedEntries: number }[] };
        const waiting = st.sessions.filter((s) => s.unpushedEntries > 0);
        expect(waiting.map((s) => `${s.session}: ${s.unpushedEntries}`), `${what}: status`).toEqual([]);
        for (const cmd of next) {
          const r = (await b.ok([cmd, '--all', '--json'])) as { failed: number; pushedEntries?: number };
          expect(r.failed, `${what}: ${cmd}`).toBe(0);
          if (cmd !== 'pull') expect(r.pushedEntries, `${what}: entries pushed by ${cmd}`).toBe(0);
        }
        expect(await headKey(rig.server), `${what}: the server's batches`).toEqual(before);
        const pulled = next.includes('pull') || next.includes('sync');
        for (const id of ids) {
          // A push alone does not fetch: a file the kill came before is not there yet.
          if (!pulled && !b.sessionFiles().some((p) => p.endsWith(`_${id}.jsonl`))) continue;
          const got = readLog(b.fileOf(id)).ids;
          if (pulled) expect([...got].sort(), `${what}: session ${id}`).toEqual(stored.get(id));
          expect(new Set(got).size, `${what}: session ${id} holds an entry twice`).toBe(got.length);
        }
      }
    }
  }, 300_000);

  it('a pull SIGKILLed after session states were written, an entry added here, then `sessync sync`: only that entry is pushed as this machine\'s, a third machine gets every entry once', async () => {
    const remote = 'git@github.com:acme/pull-interrupt-sync.git';
    const a = new Machine(rig.root, 'sync-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    await a.login(rig.server);
    const ids = Array.from({ length: 6 }, (_, n) => plantSession(a, 200 + n, ENTRIES)); // not the other tests' sessions
    await a.ok(['push', '--all', '--json']);
    const stored = new Map<string, string[]>();
    for (const id of ids) stored.set(id, (await storedIds(rig.server, id)).sort());
    let n = 0;
    // After the journal's second flush (states of the first pages durable, later pages' entries appended with no
    // durable record), and at a page's cursor later on.
    for (const point of ['journal-synced:2', 'pull-merged:12']) {
      const before = await headKey(rig.server);
      const b = new Machine(rig.root, `sync-b${n}`, { remote });
      await b.login(rig.server);
      const run = await runUntilKilled(b, ['pull', '--all'], point);
      expect(run.signal, `pull with ${point}: ${run.err}`).toBe('SIGKILL');
      // A file the killed pull made whose state has its note: the entries after the note's offset are the server's.
      let grown: string | undefined;
      for (const id of ids) if (!grown && b.sessionFiles().some((p) => p.endsWith(`_${id}.jsonl`)) && (await b.syncState(id))?.pulling) grown = id;
      expect(grown, `killed at ${point}: a file the pull made, with its note`).toBeDefined();
      if (!grown) return;
      await b.say(grown, `written on b after the pull killed at ${point}`);
      const added = readLog(b.fileOf(grown)).ids.at(-1)!;
      // Status counts the entry written here, after the killed pull's, and none of the server's.
      const st = (await b.ok(['status', '--all', '--json'])) as { sessions: { session: string; unpushedEntries: number }[] };
      expect(st.sessions.filter((s) => s.unpushedEntries > 0).map((s) => `${s.session}: ${s.unpushedEntries}`), `killed at ${point}: status`).toEqual([`${grown}: 1`]);
      const text = (await b.ok(['status', '--all'])) as string;
      expect(text, `killed at ${point}: status for a person`).toMatch(/after a pull that was cut short, not yet told apart from the server's/);
      expect(text, `killed at ${point}: status for a person`).toContain(`${grown}  told apart with the server after a pull that was cut short: 1 to push in all`);
      const r = (await b.ok(['sync', '--all', '--json'])) as { failed: number; pushedEntries: number; pushedSessions: number };
      expect(r.failed, `killed at ${point}: sync`).toBe(0);
      // What b pushed as its own: the entry written there, and the leaf marker a merge may append after it (pi's
      // leaf back on b's entry, below the pulled ones). No pulled entry, no session but that one.
      const now = await headKey(rig.server);
      const gained = now.filter((h) => !before.includes(h));
      expect(gained.map((h) => h.split('/')[0]), `killed at ${point}: the sessions b pushed to`).toEqual([grown]);
      const onServer = await storedIds(rig.server, grown);
      const pushed = onServer.filter((x) => !stored.get(grown)!.includes(x));
      const markers = readLog(b.fileOf(grown)).entries.filter((e) => e.customType === CHECKOUT_CUSTOM_TYPE).map((e) => String(e.id));
      expect(pushed.filter((x) => !markers.includes(x)), `killed at ${point}: entries b pushed as its own`).toEqual([added]);
      expect([r.pushedEntries, r.pushedSessions], `killed at ${point}: pushed, as sync says`).toEqual([pushed.length, 1]);
      for (const id of ids) stored.set(id, id === grown ? [...onServer].sort() : stored.get(id)!);
      for (const id of ids) {
        const got = await storedIds(rig.server, id);
        expect(new Set(got).size, `killed at ${point}: an entry of ${id} stored twice`).toBe(got.length);
        if (id !== grown) expect(got.sort(), `killed at ${point}: stored entries of ${id}`).toEqual(stored.get(id));
      }
      // A third machine gets every entry once, the one written on b included.
      const c = new Machine(rig.root, `sync-c${n++}`, { remote });
      await c.login(rig.server);
      await c.ok(['pull', '--all', '--json']);
      for (const id of ids) {
        // c's own leaf marker aside (made by its merge of two hosts' pages, for its next push): the server's entries.
        const got = readLog(c.fileOf(id)).entries.filter((e) => e.customType !== CHECKOUT_CUSTOM_TYPE || stored.get(id)!.includes(String(e.id))).map((e) => String(e.id));
        expect([...got].sort(), `killed at ${point}: ${id} on a third machine`).toEqual(stored.get(id));
        expect([...readLog(b.fileOf(id)).ids].sort(), `killed at ${point}: ${id} on b`).toEqual(stored.get(id));
      }
    }
  }, 240_000);

  it('a single-session pull (`pull <id>`) killed between pages: status and push find nothing to send', async () => {
    const remote = 'git@github.com:acme/pull-interrupt-one.git';
    const a = new Machine(rig.root, 'one-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    await a.login(rig.server);
    const id = plantSession(a, 100, 200); // not a session of the test above (same server)
    await a.ok(['push', '--all', '--json']);
    const b = new Machine(rig.root, 'one-b', { remote });
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    // More on the server: b's file exists, and its pull of them spans pages.
    plantSession(a, 100, 200, { from: 200 });
    await a.ok(['push', '--all', '--json']);
    const before = await headKey(rig.server);
    for (const point of ['pull-merged:2', 'pull-merged:4']) {
      const run = await runUntilKilled(b, ['pull', id], point);
      expect(run.signal, `pull with ${point}: ${run.err}`).toBe('SIGKILL');
      const st = (await b.ok(['status', id, '--json'])) as { sessions: { session: string; unpushedEntries: number }[] };
      expect(st.sessions.map((s) => s.unpushedEntries), `killed at ${point}: status`).toEqual([0]);
    }
    const r = (await b.ok(['push', id, '--json'])) as { pushedEntries: number };
    expect(r.pushedEntries).toBe(0);
    expect(await headKey(rig.server)).toEqual(before);
    const s = (await b.ok(['sync', id, '--json'])) as { pushedEntries: number };
    expect(s.pushedEntries).toBe(0);
    expect(await headKey(rig.server)).toEqual(before);
    const got = readLog(b.fileOf(id)).ids;
    expect([...got].sort()).toEqual((await storedIds(rig.server, id)).sort());
  }, 120_000);
});
