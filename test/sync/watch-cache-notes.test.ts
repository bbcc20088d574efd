// `sync --watch` whose caches cannot be saved (a home whose cache folders are files): it keeps syncing, and says so
// once per cache as a note event, not every cycle and not only when it stops.
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { pairWithSession, readLog, useServer } from './helpers.js';
import { until } from './kill-rig.js';

describe('sync --watch with caches it cannot save', () => {
  const rig = useServer(undefined, 'sessync-watch-notes-');

  it('pulls the other machine\'s session, and notes each unsaved cache once over many cycles', async () => {
    const R = 'git@github.com:acme/watch-notes.git';
    const { a, b, id } = await pairWithSession(rig.root, ['na', 'nb'], [R, R], rig.server, 'from a');
    await a.ok(['sync', '--json']);
    // b's caches: a file where each cache folder should be, so every save fails (ENOTDIR).
    mkdirSync(join(b.home, 'cache'), { recursive: true });
    for (const kind of ['tail', 'list']) {
      rmSync(join(b.home, 'cache', kind), { recursive: true, force: true });
      writeFileSync(join(b.home, 'cache', kind), 'not a folder');
    }
    const child = spawn(process.execPath, [CLI_BIN, 'sync', '--watch', '--json', '--cwd', b.project], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...b.env, SESSYNC_WATCH_PUSH_MS: '150', SESSYNC_WATCH_PULL_MS: '150' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const events: { event: string; message: string }[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => events.push(JSON.parse(l)));
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await until('the session pulled', 30_000, async () => events.some((e) => e.event === 'synced'));
      expect(readLog(b.fileOf(id)).entries.length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 2_000)); // a dozen more cycles, each failing to save the list cache
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, 'SIGTERM ends a watcher with 143').toBe(143);
    const notes = events.filter((e) => e.event === 'note' && /could not save the \w+ cache/.test(e.message)).map((e) => e.message);
    expect(notes.length, err).toBeGreaterThan(0);
    // Said by the watcher while it runs (as events), not left for its exit.
    expect(notes.some((m) => /could not save the list cache \(ENOTDIR.*nothing is lost/.test(m)), notes.join(' | ')).toBe(true);
    const kinds = notes.map((m) => /could not save the (\w+) cache/.exec(m)![1]);
    expect(new Set(kinds).size, `each cache said once: ${notes.join(' | ')}`).toBe(kinds.length);
    expect(err, 'nothing on stderr but JSON lines').not.toMatch(/^sessync: /m);
  }, 90_000);
});
