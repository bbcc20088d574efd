// Codex rollouts through sync with real files and the real server: the fork move killed with SIGKILL at each step loses
// nothing and completes on the next sync; a torn last line waits; lines at the size limit travel, over it are reported.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codex } from '../../shared/agents/codex.js';
import { LIMITS } from '../../shared/wire.js';
import { useServer } from '../sync/helpers.js';
import { CodexMachine } from './codex-rig.js';

const L = (o: object) => JSON.stringify(o);
const msg = (t: string, ts: string) => L({ timestamp: ts, type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: t }] } });
const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join('');

let n = 0;
/** A session id of this test file's own (uuid-shaped). */
function newId(): string {
  n++;
  return `01a20000-0000-7000-8000-${String(n).padStart(12, '0')}`;
}

/** Writes a new rollout of `id` on `m` as Codex names it, with a session_meta naming m's project. */
function startRollout(m: CodexMachine, id: string, ...rest: string[]): string {
  const ts = '2026-01-01T00:00:00.000Z';
  const path = join(m.sessionsDir, codex.mainFile(id, ts));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lines(L({ timestamp: ts, type: 'session_meta', payload: { id, timestamp: ts, cwd: m.project, originator: 'codex_exec' } }), ...rest));
  return path;
}

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

describe('Codex rollouts through sync (real files, real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-codexsync-');
  async function pair(name: string) {
    // A project of its own per test: the server is shared, and B pulls every session of its project.
    const remote = `git@github.com:Acme/${name}.git`;
    const a = new CodexMachine(rig.root, `${name}-a`, { remote });
    const b = new CodexMachine(rig.root, `${name}-b`, { remote });
    await a.login(rig.server);
    await b.login(rig.server);
    return { a, b };
  }

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

  async function runKilled(m: CodexMachine, step: string) {
    const { runCli } = await import('../helpers/cli.js');
    return runCli(['sync', '--cwd', m.project], { env: { ...m.env, SESSYNC_CODEX_CRASH_AT: step } });
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

  it('a rollout deleted here stays deleted through sync; restore brings it back with every line', async () => {
    const { a, b } = await pair('deleted');
    const id = newId();
    const pathA = startRollout(a, id, msg('first', '2026-01-01T00:00:01.000Z'));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const onB = b.rolloutOf(id);
    rmSync(onB);
    appendFileSync(pathA, lines(msg('second from A', '2026-01-01T00:00:03.000Z')));
    await a.ok(['sync', '--json']);
    const r = await b.run(['sync']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Codex session ${id} was deleted`);
    expect(b.rollouts()).toEqual([]);
    const back = await b.ok(['restore', id, '--json']);
    expect(back.restored).toMatchObject([{ session: id }]);
    expect(b.text(id)).toBe(readFileSync(pathA, 'utf8'));
    expect(b.rolloutOf(id)).toBe(onB);
  });

  it('a torn last line (Codex mid-write): the pulled lines wait, then land once the line is complete', async () => {
    const { a, b } = await pair('torn');
    const id = newId();
    const pathA = startRollout(a, id, msg('first', '2026-01-01T00:00:01.000Z'));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    appendFileSync(pathA, lines(msg('second from A', '2026-01-01T00:00:03.000Z')));
    await a.ok(['sync', '--json']);
    const pathB = b.rolloutOf(id);
    const half = msg('being written on B', '2026-01-01T00:00:02.000Z');
    appendFileSync(pathB, half.slice(0, 20));
    const before = readFileSync(pathB, 'utf8');
    const r = await b.run(['sync']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('its last line is still being written');
    expect(readFileSync(pathB, 'utf8')).toBe(before); // not a byte added to a file Codex is writing
    // Codex finishes the line; the next sync: the two continuations become the original and a fork, nothing lost.
    appendFileSync(pathB, `${half.slice(20)}\n`);
    expect((await b.run(['sync'])).code).toBe(0);
    expect(b.text(id)).toBe(readFileSync(pathA, 'utf8'));
    const fork = b.rollouts().map((f) => codex.sessionOf(f)!).find((s) => s !== id)!;
    expect(b.text(fork)).toContain(half);
    // status says which fork was made here, and why.
    const st = await b.run(['status']);
    expect(st.stdout).toContain(`${fork} from ${id}`);
    expect(st.stdout).toContain(`this machine continued session ${id} after another machine's continuation reached the server first`);
    expect((await b.ok(['status', '--json'])).codexForks).toMatchObject([{ fork, from: id }]);
  });

  it('a line at the entry size limit travels byte-exact; one over it is reported, stays in the file, and nothing after it is written out of order', async () => {
    const { a, b } = await pair('size');
    const id = newId();
    const overhead = 400;
    const big = msg('x'.repeat(LIMITS.maxEntryBytes - overhead), '2026-01-01T00:00:01.000Z');
    const pathA = startRollout(a, id, big, msg('after big', '2026-01-01T00:00:02.000Z'));
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    expect(b.text(id)).toBe(readFileSync(pathA, 'utf8'));
    const huge = msg('y'.repeat(LIMITS.maxEntryBytes + 10), '2026-01-01T00:00:03.000Z');
    appendFileSync(pathA, lines(huge, msg('after huge', '2026-01-01T00:00:04.000Z')));
    const r = await a.run(['sync']);
    expect(r.stderr + r.stdout).toMatch(/over the \d+-byte limit|invalid line/);
    expect(readFileSync(pathA, 'utf8')).toContain(huge);
    await b.ok(['sync', '--json']);
    // B has every line before the one too big to travel, and none after it (they would land in the wrong place).
    const onB = b.text(id);
    expect(onB).not.toContain('after huge');
    expect(readFileSync(pathA, 'utf8').startsWith(onB)).toBe(true);
  });
});
