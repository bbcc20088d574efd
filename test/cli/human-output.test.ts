// Human output: short ids, the ASCII tree with branch points, labels and the active leaf, the log of the active branch.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliEnv, jsonl, msg } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

const short = (id: string) => id.slice(-8); // UUIDv7: the random tail is the distinctive part

describe('human output', () => {
  it('tree draws the branch point, both branches, labels and the active leaf', async () => {
    const s = await t.json(['new', '--model', 'anthropic/claude-sonnet-4-5']);
    const [a, b] = (await t.json(['append', s.id], jsonl([msg('user', 'plan A'), msg('assistant', 'doing A')]))).ids;
    await t.json(['checkout', s.id, short(a!)]);
    const [c] = (await t.json(['append', s.id], jsonl([msg('user', 'plan B instead')]))).ids;
    await t.json(['label', s.id, short(b!), 'first try']);
    const r = await t.run(['tree', s.id]);
    expect(r.code).toBe(0);
    const out = r.stdout.split('\n');
    const row = (id: string) => out.find((l) => l.includes(short(id)) && !l.includes('checkout') && !l.includes('label '))!;
    expect(row(a!)).toMatch(/^\* \w{8} .*user: plan A/);
    // Two children under A: one drawn with |--, the last with `--; the old branch is "o", the active one "*".
    expect(row(b!)).toMatch(/^\|-- o \w{8} .*assistant: doing A \[first try\]$/);
    expect(out.some((l) => /^`-- \* \w{8} .*checkout of/.test(l))).toBe(true);
    expect(row(c!)).toMatch(/^ {4}\* .*user: plan B instead/);
    expect(out.filter((l) => l.includes('<- leaf'))).toHaveLength(1);
    expect(out.find((l) => l.includes('<- leaf'))).toContain('label');
  });

  it('log lists the active branch with short ids and readable descriptions', async () => {
    const s = await t.json(['new', '--model', 'openai/gpt-5']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'fix   the\ntests'), { type: 'thinking_level_change', thinkingLevel: 'high' }]))).ids;
    const r = await t.run(['log', s.id]);
    const out = r.stdout.trim().split('\n');
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^\w{8} {2}\d\d:\d\d:\d\d {2}model -> openai\/gpt-5$/);
    expect(out[1]).toBe(`${short(a!)}  ${out[1]!.slice(10, 18)}  user: fix the tests`);
    expect(out[2]).toMatch(/thinking -> high$/);
    const list = await t.run(['list']);
    expect(list.stdout).toContain(short(s.id));
    const resume = await t.run(['resume', short(s.id)]);
    expect(resume.stdout).toContain('model    openai/gpt-5');
    expect(resume.stdout).toContain('thinking high');
  });
});
