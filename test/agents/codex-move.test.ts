// The one place sessync rewrites a Codex rollout, with real files and the real server: the fork move killed with SIGKILL
// after each of its steps loses nothing and completes on the next sync; a codex process holding the rollout defers it.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codex } from '../../shared/agents/codex.js';
import { runCli } from '../helpers/cli.js';
import { useServer } from '../sync/helpers.js';
import { codexPair, lines, msg, newId, startRollout, type CodexMachine } from './codex-rig.js';

/** Waits until process `pid` has `path` open (its /proc fd table says so). */
async function waitForOpen(pid: number, path: string): Promise<void> {
  for (;;) {
    const fds = (() => {
      try {
        return readdirSync(`/proc/${pid}/fd`).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return [];
      }
    })();
    if (fds.includes(path)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the Codex fork move (real files, real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-codexmove-');
  const pair = (name: string) => codexPair(rig.root, name, rig.server);

  /** A session on both machines, then A continues and syncs, B continues offline: B's next sync makes the fork. */
  async function diverged(name: string) {
    const { a, b } = await pair(name);
    const id = newId();
    const base = [msg('first', '2026-01-01T00:00:01.000Z'), msg('answer one', '2026-01-01T00:00:02.000Z')];
    const pathA = startRollout(a, id, ...base);
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    appendFileSync(pathA, lines(msg('on A', '2026-01-01T02:00:00.000Z')));
    await a.ok(['sync', '--json']);
    const pathB = b.rolloutOf(id);
    appendFileSync(pathB, lines(msg('on B', '2026-01-01T01:00:00.000Z'), msg('more on B', '2026-01-01T01:00:01.000Z')));
    return { a, b, id, bOwn: readFileSync(pathB, 'utf8') };
  }

  async function runKilled(m: CodexMachine, step: string) {
    return runCli(['sync', '--cwd', m.project], { env: { ...m.env, SESSYNC_CODEX_CRASH_AT: step } });
  }

  for (const step of ['after-backup', 'after-forks', 'after-rewrite']) {
    it(`the fork move killed with SIGKILL ${step.replace('-', ' ')}: every line is still on B, and the next sync completes it`, async () => {
      const { a, b, id, bOwn } = await diverged(`kill-${step}`);
      const crashed = await runKilled(b, step);
      expect(crashed.code).not.toBe(0);
      // Nothing lost at the kill: each of B's lines is in its rollout, a fork rollout or the backup.
      const onDisk = b.rollouts().map((r) => readFileSync(join(b.sessionsDir, r), 'utf8')).join('');
      const backup = join(b.home, 'agents', 'codex', 'backups', `${id}.jsonl`);
      const kept = onDisk + (existsSync(backup) ? readFileSync(backup, 'utf8') : '');
      for (const l of bOwn.split('\n').filter(Boolean)) expect(kept).toContain(l);
      // The next sync finishes the move: B's original equals A's, B's work is in the fork, the backup is gone.
      const r = await b.run(['sync']);
      expect(r.code, r.stderr).toBe(0);
      await a.ok(['sync', '--json']);
      expect(b.text(id)).toBe(a.text(id));
      const forks = b.rollouts().filter((f) => !f.endsWith(`${id}.jsonl`));
      expect(forks).toHaveLength(1);
      const fork = codex.sessionOf(forks[0]!)!;
      for (const l of bOwn.split('\n').filter(Boolean).slice(1)) expect(b.text(fork)).toContain(l);
      expect(existsSync(backup)).toBe(false);
      expect(a.text(fork)).toBe(b.text(fork));
    });
  }

  it('a codex process holding the rollout open: nothing is moved while it runs; the next sync after it exits makes the fork', async () => {
    const { a, b, id, bOwn } = await diverged('held');
    // A real process named codex (tail, under that name) with B's rollout open, as a running Codex has it.
    const bin = join(rig.root, 'held-bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(execFileSync('which', ['tail'], { encoding: 'utf8' }).trim(), join(bin, 'codex'));
    const holder = spawn(join(bin, 'codex'), ['-f', b.rolloutOf(id)], { stdio: 'ignore' });
    try {
      await waitForOpen(holder.pid!, b.rolloutOf(id));
      const r = await b.run(['sync']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`Codex (pid ${holder.pid}) has ${b.rolloutOf(id)} or its index open`);
      // The summary says the pulled lines wait, and why. Seen failing on old code: no word of it, no exportWaiting.
      expect(r.stdout).toContain("1 session's pulled lines not written into its codex files yet (the agent has a file open): the next sync writes them");
      expect((await b.ok(['sync', '--json'])).exportWaiting).toEqual([{ agent: 'codex', session: id, why: 'open' }]);
      expect(b.text(id)).toBe(bOwn);
      expect(b.rollouts()).toHaveLength(1);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
    }
    expect((await b.run(['sync'])).code).toBe(0);
    await a.ok(['sync', '--json']);
    expect(b.text(id)).toBe(a.text(id));
    expect(b.rollouts()).toHaveLength(2);
  });


  it('a rollout with an unreadable line is never rewritten (the rewrite would drop it): reported, left byte for byte', async () => {
    const { b, id } = await diverged('unreadable');
    appendFileSync(b.rolloutOf(id), '{"not json\n');
    const before = readFileSync(b.rolloutOf(id), 'utf8');
    const r = await b.run(['sync']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('line(s) that do not sync (unreadable, or over the size limit), which a rewrite would drop');
    expect(readFileSync(b.rolloutOf(id), 'utf8')).toBe(before);
    expect(b.rollouts()).toHaveLength(1);
  });
});
