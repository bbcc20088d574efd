// A first open's index written after the answer: absent until flushed, written before a real `sessync resume` exits, and a failed write loses nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildContext } from '../../shared/context.js';
import { readSession } from '../../cli/store/session-reader.js';
import { indexPath, lastIndexUpdate, sessionFileIndex } from '../../cli/store/session-file-index.js';
import { flushIndexWrites } from '../../cli/store/session-file-index-deferred.js';
import { cacheDir } from '../../cli/store/paths.js';
import { runCli, useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-fidxd-', { beforeEach, afterEach });

const HEADER = JSON.stringify({ type: 'session', version: 3, id: '01a22ceb-6179-7d4e-9c3a-8e2d5f0b6179', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n';

/** A linear session: a model change, then n user / assistant pairs (the assistant naming its model). */
function session(n: number): string {
  const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  let text = HEADER + JSON.stringify({ type: 'model_change', id: 'm0', parentId: null, timestamp: ts(0), provider: 'anthropic', modelId: 'first' }) + '\n';
  let parent = 'm0';
  for (let i = 0; i < n; i++) {
    text += JSON.stringify({ type: 'message', id: `u${i}`, parentId: parent, timestamp: ts(2 * i + 1), message: { role: 'user', content: `question ${i} é` } }) + '\n';
    text += JSON.stringify({ type: 'message', id: `a${i}`, parentId: `u${i}`, timestamp: ts(2 * i + 2), message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }], provider: 'anthropic', model: `m${i}` } }) + '\n';
    parent = `a${i}`;
  }
  return text;
}

function write(n: number): string {
  const f = join(home.dir, 'sess.jsonl');
  writeFileSync(f, session(n));
  return f;
}

describe('session index: written after the answer', () => {
  it('a deferred build returns the same index, writes nothing until flushed, and is current once written', async () => {
    const f = write(20);
    const s = await sessionFileIndex(f, { defer: true, keep: false });
    expect(lastIndexUpdate.mode).toBe('rebuild');
    expect(s.entries.n).toBe(41);
    expect(existsSync(indexPath(f))).toBe(false);
    await flushIndexWrites();
    expect(existsSync(indexPath(f))).toBe(true);
    const again = await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('current');
    expect(again.entries.n).toBe(41);
    expect(again.entries.id(40)).toBe('a19');
  });

  it('a build written now replaces the write still queued for the same index', async () => {
    const f = write(3);
    await sessionFileIndex(f, { defer: true, keep: false });
    writeFileSync(f, session(4)); // appended meanwhile (the same prefix and more)
    const now = await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('rebuild'); // nothing on disk yet to advance
    expect(now.entries.n).toBe(9);
    await flushIndexWrites(); // nothing left queued: the older state does not land over the newer one
    const again = await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('current');
    expect(again.entries.n).toBe(9);
  });

  it('`sessync resume` answers, and the index is on disk once the process has exited', async () => {
    const f = write(30);
    const r = await runCli(['resume', f, '--json'], { env: { SESSYNC_HOME: process.env.SESSYNC_HOME } });
    expect(r.code, r.stderr).toBe(0);
    const full = await readSession(f);
    const ctx = buildContext(full.tree, { header: full.header });
    expect(r.json()).toMatchObject({ leafId: 'a29', model: { provider: 'anthropic', modelId: 'm29' }, messageCount: ctx.messages.length });
    expect(existsSync(indexPath(f))).toBe(true);
    await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('current'); // what the process wrote before it exited describes the file
  });

  it('an index that cannot be written after the answer: the answer stands, stderr says so, and the next open builds it', async () => {
    const f = write(5);
    // The index folder's place taken by a file: the write fails after resume has answered.
    rmSync(cacheDir('index'), { recursive: true, force: true });
    mkdirSync(join(cacheDir('index'), '..'), { recursive: true });
    writeFileSync(cacheDir('index'), 'not a folder');
    const r = await runCli(['resume', f, '--json'], { env: { SESSYNC_HOME: process.env.SESSYNC_HOME } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ leafId: 'a4', messageCount: 10 });
    expect(r.stderr).toMatch(/could not save the session index .*the next open rebuilds it/);
    rmSync(cacheDir('index'), { force: true });
    await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('rebuild');
    expect(existsSync(indexPath(f))).toBe(true);
  });
});
