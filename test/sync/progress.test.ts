// The progress bar of a long sync: drawn on a terminal (a real pseudo-terminal via `script`), never with --json or into a pipe.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, plantSession, useServer } from './helpers.js';
import { runUntilKilled } from './kill-rig.js';

const hasScript = spawnSync('script', ['--version']).status === 0;

/** Runs sessync under a pseudo-terminal so stderr is a TTY, the way a person at a terminal runs it. */
function runInTty(m: Machine, args: string[]): { code: number; out: string } {
  const cmd = [process.execPath, CLI_BIN, ...args, '--cwd', m.project].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qfec', cmd, '/dev/null'], { cwd: REPO_ROOT, env: { ...process.env, ...m.env, COLUMNS: '160' }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

describe.skipIf(!hasScript)('sync progress', () => {
  const rig = useServer(undefined, 'sessync-progress-');

  it('draws sessions, entries and bytes on a terminal, then one summary line; nothing of it with --json', async () => {
    const m = new Machine(rig.root, 'p', { remote: 'git@github.com:acme/progress.git' });
    await m.login(rig.server);
    for (let i = 0; i < 3; i++) {
      const id = await m.newSession();
      await m.say(id, `first of ${i}`, `second of ${i}`);
    }
    const r = runInTty(m, ['push']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/sync \[[^\]]*\] \d+\/3 sessions \| \d+ entries \| [\d.]+ (B|KB)/);
    expect(r.out).toMatch(/pushed 6 entries/);
    // Scripts get no bar: --json output is one JSON document and stderr stays free of it.
    const again = await m.run(['sync', '--json']);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toMatch(/sessions \|/);
    JSON.parse(again.stdout);
  }, 90_000);

  it('a run that pulls again the sessions of a killed pull counts each one done: the bar ends at its total', async () => {
    const remote = 'git@github.com:acme/progress-replay.git';
    const a = new Machine(rig.root, 'replay-a', { remote, env: { SESSYNC_SYNC_BATCH_BYTES: '400' } });
    const b = new Machine(rig.root, 'replay-b', { remote });
    for (const m of [a, b]) await m.login(rig.server);
    for (let n = 0; n < 4; n++) plantSession(a, 300 + n, 60);
    await a.ok(['push', '--all', '--json']);
    const k = await runUntilKilled(b, ['pull', '--all'], 'pull-merged:7'); // every file made, their notes left
    expect(k.signal, k.err).toBe('SIGKILL');
    // The account holds the test above's sessions too: each file here has its note (the kill came at the last's cursor).
    const made = b.sessionFiles().length;
    expect(made, 'the files the killed pull made').toBe(7);
    const r = runInTty(b, ['pull', '--all']);
    expect(r.code, r.out).toBe(0);
    const shown = [...r.out.matchAll(/(\d+)\/(\d+) sessions/g)].map((m) => `${m[1]}/${m[2]}`);
    expect(shown.length, r.out).toBeGreaterThan(0);
    expect(shown.at(-1), `the bar's last count: ${r.out}`).toBe(`${made}/${made}`);
  }, 90_000);
});

