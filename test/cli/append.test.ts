// Appending through the CLI and the store: torn tails, concurrent real processes, killed lock holders, unknown types.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { REPO_ROOT } from '../helpers/cli.js';
import { cliEnv, entriesOf, jsonl, lines, msg } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

const WORKER = join(REPO_ROOT, 'test/cli/append-worker.ts');

function worker(args: string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, SESSYNC_HOME: t.home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exited(child: ReturnType<typeof worker>): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

/** Every line parses, and in file order each entry's parent is the entry before it (no unintended fork). */
function expectLinearChain(path: string, expectedEntries: number): void {
  const raw = lines(path);
  expect(raw).toHaveLength(expectedEntries + 1);
  const entries = raw.slice(1).map((l) => JSON.parse(l));
  expect(entries[0].parentId).toBeNull();
  for (let i = 1; i < entries.length; i++) expect(entries[i].parentId, `entry ${i}`).toBe(entries[i - 1].id);
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
}

describe('append', () => {
  it('after a torn last line: the bytes before stay unchanged and the new entry gets its own line', async () => {
    const s = await t.json(['new']);
    const [first] = (await t.json(['append', s.id], jsonl([msg('user', 'one')]))).ids;
    appendFileSync(s.path, '{"type":"message","id":"cut-off","par');
    const before = readFileSync(s.path);
    const [second] = (await t.json(['append', s.id], jsonl([msg('user', 'two')]))).ids;
    const after = readFileSync(s.path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const all = after.toString('utf8').split('\n');
    expect(all[2]).toBe('{"type":"message","id":"cut-off","par');
    expect(JSON.parse(all[3]!)).toMatchObject({ id: second, parentId: first, message: { content: [{ text: 'two' }] } });
    expect(all[4]).toBe('');
    const doctor = await t.run(['doctor', s.id, '--json']);
    expect(doctor.code).toBe(1);
    expect(doctor.json().problems).toEqual([expect.objectContaining({ kind: 'line', line: 3 })]);
  });

  it('fills id, parentId and timestamp; each line continues from the previous one; --parent picks the first parent', async () => {
    const s = await t.json(['new']);
    const ids = (await t.json(['append', s.id], jsonl([msg('user', 'a'), msg('assistant', 'b')]))).ids;
    const [c] = (await t.json(['append', s.id, '--parent', ids[0]!.slice(-8)], jsonl([msg('user', 'c')]))).ids;
    const e = entriesOf(s.path);
    expect(e.map((x) => x.parentId)).toEqual([null, ids[0], ids[0]]);
    expect(e[2].id).toBe(c);
    for (const x of e) expect(Number.isNaN(Date.parse(x.timestamp))).toBe(false);
    expect((await t.json(['resume', s.id])).leafId).toBe(c);
  });

  it('picks up entries another program (pi) appended since, and a file rewritten under it', async () => {
    const s = await t.json(['new']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'a')]))).ids;
    const external = { type: 'message', id: 'ext00001', parentId: a, timestamp: new Date(Date.now() + 5).toISOString(), message: { role: 'user', content: 'from pi' } };
    appendFileSync(s.path, JSON.stringify(external) + '\n');
    const [b] = (await t.json(['append', s.id], jsonl([msg('user', 'b')]))).ids;
    expect(entriesOf(s.path).at(-1)).toMatchObject({ id: b, parentId: 'ext00001' });
    // Shrink the file back to the header + a (as a restore from backup would): the cached tips no longer apply.
    const keep = lines(s.path).slice(0, 2).join('\n') + '\n';
    truncateSync(s.path, 0);
    writeFileSync(s.path, keep);
    const [c] = (await t.json(['append', s.id], jsonl([msg('user', 'c')]))).ids;
    expect(entriesOf(s.path).map((e) => [e.id, e.parentId])).toEqual([
      [a, null],
      [c, a],
    ]);
  });

  it('only new entries need a server-valid id: a file already holding an odd id still reads, and can be continued and labelled', async () => {
    const s = await t.json(['new']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'a')]))).ids;
    const odd = { type: 'message', id: 'odd id/1', parentId: a, timestamp: new Date(Date.now() + 5).toISOString(), message: { role: 'user', content: 'odd' } };
    appendFileSync(s.path, JSON.stringify(odd) + '\n');
    const resumed = await t.json(['resume', s.id]);
    expect(resumed).toMatchObject({ leafId: 'odd id/1', messageCount: 2, problems: [] });
    const [b] = (await t.json(['append', s.id, '--parent', 'odd id/1'], jsonl([msg('user', 'b')]))).ids;
    await t.json(['append', s.id], jsonl([{ type: 'label', targetId: 'odd id/1', label: 'kept' }]));
    const e = entriesOf(s.path);
    expect(e[2]).toMatchObject({ id: b, parentId: 'odd id/1' });
    expect(e[3]).toMatchObject({ type: 'label', targetId: 'odd id/1', label: 'kept' });
    // A new entry with such an id is refused, and the file keeps every byte.
    const before = readFileSync(s.path);
    const r = await t.run(['append', s.id], jsonl([{ ...msg('user', 'x'), id: 'odd id/2' }]));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"id": an entry id must/);
    expect(readFileSync(s.path).equals(before)).toBe(true);
  });

  it('a label may target an entry given an explicit id earlier in the same batch', async () => {
    const s = await t.json(['new']);
    const ids = (await t.json(['append', s.id], jsonl([{ ...msg('user', 'a'), id: 'first-01' }, { type: 'label', targetId: 'first-01', label: 'start' }]))).ids;
    expect(ids[0]).toBe('first-01');
    expect(entriesOf(s.path)[1]).toMatchObject({ type: 'label', targetId: 'first-01', label: 'start' });
  });

  it('a compaction and a branch summary may name entries in the file, earlier in the batch, or (fromId) "root"', async () => {
    const s = await t.json(['new']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'a')]))).ids;
    const batch = [
      { ...msg('assistant', 'b'), id: 'batch-b1' },
      { type: 'compaction', summary: 'sum', firstKeptEntryId: 'batch-b1', tokensBefore: 10 },
      { type: 'branch_summary', summary: 'left a branch', fromId: a },
      { type: 'branch_summary', summary: 'from the start', fromId: 'root' },
    ];
    expect((await t.json(['append', s.id], jsonl(batch))).ids).toHaveLength(4);
    expect(entriesOf(s.path).slice(2).map((e) => e.type)).toEqual(['compaction', 'branch_summary', 'branch_summary']);
    const ctx = await t.json(['context', s.id]);
    expect(ctx.messages.map((m: { role: string }) => m.role)).toEqual(['compactionSummary', 'assistant', 'branchSummary', 'branchSummary']);
  });

  it('checkout where the session already is writes nothing; anywhere else it appends one entry', async () => {
    const s = await t.json(['new']);
    const [a, b] = (await t.json(['append', s.id], jsonl([msg('user', 'a'), msg('assistant', 'b')]))).ids;
    let before = readFileSync(s.path);
    expect(await t.json(['checkout', s.id, b])).toMatchObject({ targetId: b, leafId: b, written: false });
    expect(readFileSync(s.path).equals(before)).toBe(true);
    const moved = await t.json(['checkout', s.id, a]);
    expect(moved).toMatchObject({ targetId: a, written: true });
    before = readFileSync(s.path);
    // Checking out the same entry again: the leaf is the checkout entry right under it, and the last line.
    expect(await t.json(['checkout', s.id, a])).toMatchObject({ targetId: a, leafId: moved.leafId, written: false });
    expect(readFileSync(s.path).equals(before)).toBe(true);
    // Back to b: a write again, and the context follows.
    expect(await t.json(['checkout', s.id, b])).toMatchObject({ targetId: b, written: true });
    expect((await t.json(['context', s.id])).messages).toHaveLength(2);
  });

  it('an unknown entry type already in a file round-trips unchanged through append and fork', async () => {
    const s = await t.json(['new']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'a')]))).ids;
    const futureLine = `{"type":"future_thing","id":"fut00001","parentId":"${a}","timestamp":"2030-01-01T00:00:00.000Z","zeta":{"nested":[1,2,{"x":null}]},"alpha":"kept in this order"}`;
    appendFileSync(s.path, futureLine + '\n');
    const [b] = (await t.json(['append', s.id], jsonl([msg('user', 'b')]))).ids;
    expect(lines(s.path)[2]).toBe(futureLine);
    expect(entriesOf(s.path).at(-1)).toMatchObject({ id: b, parentId: 'fut00001' });
    const f = await t.json(['fork', s.id]);
    expect(lines(f.path)).toContain(futureLine);
    expect(lines(f.path).slice(1)).toEqual(lines(s.path).slice(1));
    const tree = await t.run(['tree', s.id]);
    expect(tree.stdout).toContain('future_thing');
  });

  it('several processes appending at once (CLI and library): every entry present, no interleaved bytes, one linear chain', async () => {
    const s = await t.json(['new']);
    // 4 CLI processes at a time, each appending 5 lines per call, 4 calls each.
    const cliCalls = async (w: number) => {
      for (let k = 0; k < 4; k++) {
        const r = await t.run(['append', s.id, '--json'], jsonl([0, 1, 2, 3, 4].map((i) => msg('user', `cli${w}-${k}-${i}`))));
        expect(r.code, r.stderr).toBe(0);
      }
    };
    // 4 library processes, each appending 40 entries one call at a time (the contended path).
    const libs = [0, 1, 2, 3].map((w) => exited(worker(['append', s.path, '40', `lib${w}`])));
    await Promise.all([0, 1, 2, 3].map(cliCalls));
    const results = await Promise.all(libs);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const total = 4 * 4 * 5 + 4 * 40;
    expectLinearChain(s.path, total);
    const texts = new Set(entriesOf(s.path).map((e) => e.message.content[0]?.text ?? e.message.content));
    for (let w = 0; w < 4; w++) for (let i = 0; i < 40; i++) expect(texts.has(`lib${w}-${i}`)).toBe(true);
    expect(existsSync(`${s.path}.lock`)).toBe(false);
  });

  it('several waiters finding the lock of a dead holder at once: one takes it over at a time, the chain stays linear', async () => {
    const s = await t.json(['new']);
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('close', r));
    writeFileSync(`${s.path}.lock`, JSON.stringify({ pid: dead.pid, host: hostname(), at: new Date().toISOString() }));
    const results = await Promise.all([0, 1, 2, 3].map((w) => exited(worker(['append', s.path, '15', `w${w}`]))));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expectLinearChain(s.path, 60);
    expect(existsSync(`${s.path}.lock`)).toBe(false);
  });

  it('eight waiters meeting a dead holder\'s lock, three times over: never two holders at once, the chain stays linear', async () => {
    const s = await t.json(['new']);
    for (let round = 0; round < 3; round++) {
      const dead = spawn(process.execPath, ['-e', '0']);
      await new Promise((r) => dead.on('close', r));
      writeFileSync(`${s.path}.lock`, JSON.stringify({ pid: dead.pid, host: hostname(), at: new Date().toISOString() }));
      const results = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((w) => exited(worker(['append', s.path, '3', `r${round}w${w}`]))));
      for (const r of results) expect(r.code, r.stderr).toBe(0);
    }
    expectLinearChain(s.path, 72);
    expect(existsSync(`${s.path}.lock`)).toBe(false);
    expect(existsSync(`${s.path}.lock.break`)).toBe(false);
  });

  it('a process SIGKILLed while holding the lock does not block others; a live holder makes append fail clearly', async () => {
    const s = await t.json(['new']);
    const holder = worker(['hold', s.path]);
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.setEncoding('utf8').on('data', (d: string) => d.includes('held') && resolve());
      holder.on('close', (code) => reject(new Error(`holder exited ${code}`)));
    });
    expect(existsSync(`${s.path}.lock`)).toBe(true);
    const before = readFileSync(s.path);
    const blocked = await t.run(['append', s.id], jsonl([msg('user', 'waits')]), { SESSYNC_LOCK_TIMEOUT_MS: '400' });
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr).toMatch(/locked by process \d+/);
    expect(readFileSync(s.path).equals(before)).toBe(true);

    holder.kill('SIGKILL');
    await new Promise((r) => holder.on('close', r));
    expect(existsSync(`${s.path}.lock`)).toBe(true); // the dead holder's lock is still there
    const r = await t.run(['append', s.id, '--json'], jsonl([msg('user', 'gets through')]), { SESSYNC_LOCK_TIMEOUT_MS: '20000' });
    expect(r.code, r.stderr).toBe(0);
    expect(entriesOf(s.path).at(-1).message.content[0].text).toBe('gets through');
    expect(existsSync(`${s.path}.lock`)).toBe(false);
  });
});
