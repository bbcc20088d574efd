// The session index and other writers: a file appended by pi or a killed appender, rewritten, truncated or torn behind
// sessync's back is caught and re-indexed from where it still agrees; a torn index is never trusted past its last commit.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildContext } from '../../shared/context.js';
import { readSession } from '../../cli/store/session-reader.js';
import { openSessionView } from '../../cli/store/session-file-index-open.js';
import { indexPath, lastIndexUpdate, sessionFileIndex } from '../../cli/store/session-file-index.js';
import { decodeIndex } from '../../cli/store/session-file-index-codec.js';
import { REPO_ROOT, useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-fidxw-', { beforeEach, afterEach });
const CHILD = join(REPO_ROOT, 'test/cli/index-writer-child.ts');

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n';
const user = (id: string, parentId: string | null, s: number, text = `hello ${id}`) =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), message: { role: 'user', content: text } }) + '\n';
const assistant = (id: string, parentId: string, s: number, model: string) =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }], provider: 'p', model } }) + '\n';
const compaction = (id: string, parentId: string, s: number, firstKept: string) =>
  JSON.stringify({ type: 'compaction', id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), summary: 'earlier work', firstKeptEntryId: firstKept, tokensBefore: 5 }) + '\n';

/** A linear session of n user/assistant pairs with a compaction in the middle. */
function session(n: number, tag = 'a'): string {
  let text = HEADER;
  let parent: string | null = null;
  for (let i = 0; i < n; i++) {
    const u = `${tag}u${i}`;
    const a = `${tag}a${i}`;
    text += user(u, parent, 2 * i) + assistant(a, u, 2 * i + 1, `m${i}`);
    parent = a;
    if (i === Math.floor(n / 2)) {
      text += compaction(`${tag}c${i}`, a, 2 * i + 1, `${tag}u${i - 1}`);
      parent = `${tag}c${i}`;
    }
  }
  return text;
}

async function expectSameAsFull(path: string): Promise<void> {
  const full = await readSession(path);
  const v = await openSessionView(path);
  expect(v.index).not.toBeNull();
  expect(v.leafId).toBe(full.tree.leafId);
  expect((await v.branch()).map((e) => e.id)).toEqual(full.tree.branch().map((e) => e.id));
  expect(await v.context()).toEqual(buildContext(full.tree, { header: full.header }));
  expect(v.problems).toEqual(full.problems);
}

const file = () => join(home.dir, 'sess.jsonl');

describe('session index: changes behind sessync\'s back', () => {
  it('pi\'s own SessionManager appends in another process: the index is advanced over the new bytes only', async () => {
    const f = file();
    writeFileSync(f, session(6));
    await expectSameAsFull(f);
    const before = statSync(f).size;
    const ino = statSync(indexPath(f)).ino;
    const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, 'pi', f, '3'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(statSync(f).size).toBeGreaterThan(before);
    await sessionFileIndex(f);
    expect(lastIndexUpdate).toEqual({ mode: 'append', from: before, to: statSync(f).size });
    expect(statSync(indexPath(f)).ino).toBe(ino); // appended to, not rewritten
    await expectSameAsFull(f);
    expect((await (await openSessionView(f)).context()).model).toEqual({ provider: 'anthropic', modelId: 'pi-model-2' });
  });

  it('a rewrite of the end of the file is re-indexed from the last entry that still agrees', async () => {
    const f = file();
    const text = session(10);
    writeFileSync(f, text);
    await sessionFileIndex(f);
    // Keep the first 8 lines, write another continuation (same length of file or not).
    const keep = text.split('\n').slice(0, 8).join('\n') + '\n';
    writeFileSync(f, keep + user('other1', 'au3', 50, 'a different ending') + assistant('other2', 'other1', 51, 'mx'));
    await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('cut');
    expect(lastIndexUpdate.from).toBe(Buffer.byteLength(keep));
    await expectSameAsFull(f);
  });

  it('a same-size rewrite with other ids is caught (tail check), and a rewrite of the whole file rebuilds', async () => {
    const f = file();
    writeFileSync(f, session(5, 'a'));
    await sessionFileIndex(f);
    writeFileSync(f, session(5, 'b')); // same lengths, every id different
    await expectSameAsFull(f);
    writeFileSync(f, HEADER.replace('"sess"', '"other"') + user('z1', null, 1));
    await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('rebuild');
    await expectSameAsFull(f);
  });

  it('a truncation mid-line (torn tail) and at a line end, then the line completed', async () => {
    const f = file();
    const text = session(8);
    writeFileSync(f, text);
    await sessionFileIndex(f);
    const lines = text.split('\n');
    const cut = Buffer.byteLength(lines.slice(0, 10).join('\n') + '\n') + 15;
    truncateSync(f, cut);
    await expectSameAsFull(f);
    expect((await openSessionView(f)).problems.at(-1)?.reason).toMatch(/^torn last line/);
    truncateSync(f, cut - 15);
    await sessionFileIndex(f);
    expect(lastIndexUpdate).toEqual({ mode: 'append', from: cut - 15, to: cut - 15 }); // nothing new to index
    await expectSameAsFull(f);
    appendFileSync(f, lines[10] + '\n');
    await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('append');
    await expectSameAsFull(f);
  });

  it('a file changed between the index check and the read: the stale line is caught and the answer is the new file\'s', async () => {
    const f = file();
    writeFileSync(f, session(4, 'a'));
    await sessionFileIndex(f); // indexed before: the view below parses nothing, so it reads its entries from the file
    const v = await openSessionView(f);
    writeFileSync(f, session(4, 'b'));
    const ctx = await v.context();
    const full = await readSession(f);
    expect(ctx).toEqual(buildContext(full.tree, { header: full.header }));
  });

  it('a torn or damaged index is trusted only up to its last commit that verifies', async () => {
    const f = file();
    const text = session(6);
    writeFileSync(f, text.slice(0, text.indexOf('\n', text.length / 2) + 1));
    await sessionFileIndex(f);
    const firstBatch = statSync(indexPath(f)).size;
    writeFileSync(f, text);
    await sessionFileIndex(f);
    const whole = readFileSync(indexPath(f));
    expect(whole.length).toBeGreaterThan(firstBatch);
    // Every cut inside the second batch: as if its writer was killed mid-write.
    for (let at = firstBatch; at < whole.length; at += 7) {
      writeFileSync(indexPath(f), whole.subarray(0, at));
      expect(decodeIndex(whole.subarray(0, at))!.validLength).toBe(firstBatch);
      await sessionFileIndex(f);
      expect(lastIndexUpdate.mode).toBe('append');
      await expectSameAsFull(f);
      expect(readFileSync(indexPath(f)).equals(whole)).toBe(true); // the torn batch was replaced, not kept
    }
    // A flipped byte inside the first batch: its hash fails, so nothing of the index is used.
    const bad = Buffer.from(whole);
    bad[20] = bad[20]! ^ 0xff;
    writeFileSync(indexPath(f), bad);
    await sessionFileIndex(f);
    expect(lastIndexUpdate.mode).toBe('rebuild');
    await expectSameAsFull(f);
  });

  it('an appender that keeps the index is killed -9 at random moments: the next open still matches the full read', async () => {
    const f = file();
    writeFileSync(f, session(3));
    for (let round = 0; round < 3; round++) {
      const last = (await readSession(f)).tree.leafId!;
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'appender', f, '400', last], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 200)); // a random moment, not a measurement
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await expectSameAsFull(f);
    }
  });
});
