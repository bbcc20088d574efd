// doctor and damaged files: dangling parents, duplicate ids and corrupt lines are reported, and the rest still loads.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync } from 'node:fs';
import { cliEnv, jsonl, msg } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

const entry = (id: string, parentId: string | null, text: string, ts: string) =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: ts, message: { role: 'user', content: text } });

describe('doctor', () => {
  it('a dangling parent is reported by doctor (exit 1) and the entries above it still load in log and context', async () => {
    const s = await t.json(['new']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'a')]))).ids;
    appendFileSync(s.path, entry('orphan01', 'missing0', 'orphan', '2030-01-01T00:00:00.000Z') + '\n');
    appendFileSync(s.path, entry('child001', 'orphan01', 'above the orphan', '2030-01-01T00:00:01.000Z') + '\n');
    const d = await t.run(['doctor', s.id, '--json']);
    expect(d.code).toBe(1);
    expect(d.json().problems).toEqual([expect.objectContaining({ kind: 'entry', entryId: 'orphan01', reason: expect.stringContaining('dangling') })]);
    const human = await t.run(['doctor', s.id]);
    expect(human.stdout).toContain('dangling');
    const log = await t.json(['log', s.id]);
    expect(log.entries.map((e: any) => e.id)).toEqual(['orphan01', 'child001']);
    const tree = await t.run(['tree', s.id]);
    expect(tree.stdout).toContain('parent missing0 missing');
    expect(tree.stdout).toContain(a!.slice(-8));
    // Appending still works and continues from the leaf.
    const [b] = (await t.json(['append', s.id], jsonl([msg('user', 'b')]))).ids;
    expect((await t.json(['resume', s.id])).leafId).toBe(b);
  });

  it('corrupt lines and duplicate ids are reported; a clean session exits 0', async () => {
    const s = await t.json(['new']);
    await t.json(['append', s.id], jsonl([msg('user', 'a')]));
    expect((await t.run(['doctor', s.id])).code).toBe(0);
    appendFileSync(s.path, 'garbage line\n');
    appendFileSync(s.path, entry('dup00001', null, 'one', '2030-01-01T00:00:00.000Z') + '\n');
    appendFileSync(s.path, entry('dup00001', null, 'two', '2030-01-01T00:00:01.000Z') + '\n');
    const d = await t.run(['doctor', s.id, '--json']);
    expect(d.code).toBe(1);
    const kinds = d.json().problems.map((p: any) => p.reason);
    expect(kinds.some((r: string) => r.includes('invalid JSON'))).toBe(true);
    expect(kinds.some((r: string) => r.includes('duplicate id'))).toBe(true);
  });

  it('a line holding two entries (two writers raced) is split: both load, doctor reports the split, a broken value is still reported', async () => {
    const s = await t.json(['new']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'a')]))).ids;
    appendFileSync(s.path, entry('glued001', a!, 'one', '2030-01-01T00:00:00.000Z') + entry('glued002', 'glued001', 'two', '2030-01-01T00:00:01.000Z') + '\n');
    appendFileSync(s.path, entry('glued003', 'glued002', 'three', '2030-01-01T00:00:02.000Z') + '{"type":"message","id":"torn' + '\n');
    const d = await t.run(['doctor', s.id, '--json']);
    expect(d.code).toBe(1);
    const problems = d.json().problems;
    expect(problems).toEqual([
      expect.objectContaining({ kind: 'split', line: 3, reason: expect.stringContaining('held 2 JSON values') }),
      expect.objectContaining({ kind: 'split', line: 4, reason: expect.stringContaining('1 not usable') }),
      expect.objectContaining({ kind: 'line', line: 4, reason: expect.stringContaining('value 2 of 2') }),
    ]);
    const log = await t.json(['log', s.id]);
    expect(log.entries.map((e: any) => e.id)).toEqual([a, 'glued001', 'glued002', 'glued003']);
    // The tail state counts the split entries too: an append continues from the last of them.
    const [b] = (await t.json(['append', s.id], jsonl([msg('user', 'b')]))).ids;
    expect((await t.json(['log', s.id])).entries.map((e: any) => e.id)).toEqual([a, 'glued001', 'glued002', 'glued003', b]);
  });
});
