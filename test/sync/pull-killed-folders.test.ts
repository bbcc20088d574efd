// Folders made by a pull killed before their names were durable are found existing by the next pull, which makes
// each one's name durable in its parent, up to the sessions root's own, before the cursors of files under them
// (strace of the real CLI; skipped without strace).
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, startNodeServer, useServer } from './helpers.js';
import { hasStrace, runUntilKilled, tracedRun } from './kill-rig.js';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Line numbers at which fsyncs of `dir` completed (a call cut by another thread's completes at its `resumed` half). */
function fsyncsDone(lines: readonly string[], dir: string): number[] {
  const out: number[] = [];
  const open = new Set<string>();
  const start = new RegExp(`\\bf(?:data)?sync\\(\\d+<${esc(dir)}>`);
  lines.forEach((l, n) => {
    const pid = l.split(' ', 1)[0]!;
    if (start.test(l)) {
      if (l.includes('<unfinished ...>')) open.add(pid);
      else if (/= 0$/.test(l.trim())) out.push(n);
    } else if (open.has(pid) && /<\.\.\. f(?:data)?sync resumed>/.test(l)) {
      open.delete(pid);
      if (/= 0$/.test(l.trim())) out.push(n);
    }
  });
  return out;
}

// Killed at its first file's cursor (the other files maybe linked too, the pulls run side by side), or at its last
// (every file linked, none by the rerun: it finds them there with no state, as it finds a file pi wrote). Each on a
// server of its own: the planted sessions' ids are the same.
describe.skipIf(!hasStrace()).each(['pull-merged:1', 'pull-merged:4'])('folders made by a pull killed at %s (strace of the real CLI; skipped without strace)', (point) => {
  const rig = useServer(startNodeServer, 'sessync-killed-folders-');

  it('the rerun fsyncs the parents of the folders it finds, once each, up to the root\'s parent, before any state is written', async () => {
    const remote = 'git@github.com:acme/killed-folders.git';
    const a = new Machine(rig.root, 'a', { remote });
    const name = 'b';
    // pi's folder set up, its sessions folder not yet (a folder named by SESSYNC_SESSIONS_DIR must exist).
    const agentDir = join(rig.root, name, 'pi', 'agent');
    mkdirSync(agentDir, { recursive: true });
    const sessions = join(agentDir, 'sessions');
    const b = new Machine(rig.root, name, { remote, env: { PI_CODING_AGENT_DIR: agentDir } });
    for (const m of [a, b]) await m.login(rig.server);
    await b.ok(['pull', '--all', '--json']); // the host id and the state folders, before the killed run
    const ids = Array.from({ length: 4 }, (_, n) => plantSession(a, n, 5));
    await a.ok(['push', '--all', '--json']);
    // Run 1 dies at a file's cursor: pi/agent/sessions/<project> made, names in it maybe never fsynced.
    const k = await runUntilKilled(b, ['pull', '--all'], point);
    expect(k.signal, k.err).toBe('SIGKILL');
    // Whichever file came first (the pulls run side by side), its project folder is the one every session goes in.
    const made = readdirSync(sessions);
    expect(made, 'the project folder run 1 made').toHaveLength(1);
    const project = join(sessions, made[0]!);

    const trace = join(rig.root, 'rerun.strace');
    const run = await tracedRun(b, ['pull', '--all'], trace, { calls: 'mkdir,mkdirat,fsync,fdatasync,link,linkat,write,writev', strings: 4000 });
    expect(run.code, run.err).toBe(0);
    const t = readFileSync(trace, 'utf8').split('\n');
    expect(ids.map((id) => dirname(b.fileOf(id, sessions))), 'every session in that folder').toEqual(ids.map(() => project));
    expect(t.filter((l) => /\bmkdir(at)?\(/.test(l) && l.includes(project) && /= 0$/.test(l.trim())), 'nothing made again').toEqual([]);
    const linked = t.filter((l) => /\blink(at)?\(/.test(l) && l.includes(project)).length;
    if (point.endsWith(':4')) expect(linked, 'every file linked by run 1').toBe(0);
    // A state with a cursor (the note of the pull under way before each request carries the cursor it had, empty here).
    const stateWrite = t.findIndex((l) => /\b(write|writev)\(\d+<[^>]*(push-journal\.jsonl|state-pack|\/sessions\/[^/>]+\.json)/.test(l) && ids.some((id) => l.includes(id)) && /\\"cursor\\":\{\\"/.test(l));
    expect(stateWrite, 'a state with a cursor of a pulled session written').toBeGreaterThanOrEqual(0);
    // The project folder's name is in sessions, the root's in agent: each fsynced once, done before the state's write.
    for (const parent of [sessions, dirname(sessions)]) {
      const done = fsyncsDone(t, parent);
      expect(done.length, `fsyncs of ${parent}`).toBe(1);
      expect(done[0]!, `${parent} fsynced before the state is written`).toBeLessThan(stateWrite);
    }
    // Bounded at the root: what holds pi's folder is not this pull's to make durable.
    for (const above of [join(rig.root, name, 'pi'), join(rig.root, name)]) expect(fsyncsDone(t, above), `fsyncs of ${above}`).toEqual([]);
  }, 120_000);
});
