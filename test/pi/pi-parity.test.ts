// pi's real loader (SessionManager + buildSessionContext from @mariozechner/pi-coding-agent) against sessync's,
// on one machine: the real fixtures, sessync's own writes, and each case where the two used to disagree.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { cliEnv, jsonl, msg, writeLines } from '../cli/cli-env.js';
import type { CliEnv } from '../cli/cli-env.js';
import { FIXTURES, fixtureFiles, piView, plain, sessyncView } from './pi-view.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

const projectDir = () => {
  const d = join(t.root, `--${t.project.slice(1).replace(/\//g, '-')}--`);
  mkdirSync(d, { recursive: true });
  return d;
};

/** Both views of one file, asserted equal (leaf, branch, model, thinking level, messages). */
async function expectSame(path: string) {
  const pi = plain(piView(path));
  const ours = plain(await sessyncView(path));
  expect(ours).toEqual(pi);
  return pi;
}

const v3 = fixtureFiles('pi-v3');
const v1 = fixtureFiles('pi-v1');

describe('fixtures', () => {
  it('are present (../shared/fixtures/pi-v1 and pi-v3)', () => {
    if (v3.length === 0 || v1.length === 0) {
      const msg = `pi fixtures missing under ${FIXTURES}: the fixture comparisons below are skipped`;
      console.warn(msg);
      if (process.env.CI === 'true') throw new Error(msg);
    }
  });

  for (const f of v3) {
    it(`pi-v3/${basename(f)}: same leaf, branch, model, thinking level and messages`, async () => {
      const copy = join(projectDir(), basename(f));
      copyFileSync(f, copy);
      const v = await expectSame(copy);
      expect(v.messages.length).toBeGreaterThan(0);
    });
  }

  for (const f of v1) {
    it(`pi-v1/${basename(f)}: after sessync migrates it, pi resumes it like sessync, with the header's model`, async () => {
      const dir = projectDir();
      const copy = join(dir, basename(f));
      copyFileSync(f, copy);
      const r = await t.json(['migrate', copy]);
      expect(r[0]).toMatchObject({ fromVersion: 1, toVersion: 3 });
      const v = await expectSame(copy);
      expect(v.model).not.toBeNull();
      // At the root, before any line of the log, pi already has the v1 header's model and thinking level.
      const header = JSON.parse(readFileSync(f, 'utf8').split('\n')[0]!);
      const first = await t.json(['log', copy]);
      const settings = first.entries.slice(0, 2).map((e: { type: string }) => e.type);
      expect(settings).toEqual(['model_change', 'thinking_level_change']);
      expect(header.modelId).toBeTruthy();
    });
  }
});

describe('a v1 file whose model is only in its header', () => {
  // (No assistant message: pi takes the model from any assistant message, even one without provider and model,
  // which pi itself always writes; sessync skips such a message, and append refuses it.)
  it('after sessync migrates it, pi resumes it with that model and thinking level (pi reads no header field)', async () => {
    const id = 'v1-header-model';
    const path = join(projectDir(), `2025-01-01T00-00-00-000Z_${id}.jsonl`);
    writeLines(path, [
      { type: 'session', id, timestamp: '2025-01-01T00:00:00.000Z', cwd: t.project, provider: 'anthropic', modelId: 'claude-3-5-sonnet', thinkingLevel: 'low' },
      { type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'fix the tests' } },
      { type: 'message', timestamp: '2025-01-01T00:00:02.000Z', message: { role: 'user', content: 'are you there?' } },
    ]);
    await t.json(['migrate', path]);
    const v = await expectSame(path);
    expect(v.model).toEqual({ provider: 'anthropic', modelId: 'claude-3-5-sonnet' });
    expect(v.thinkingLevel).toBe('low');
  });
});

describe('what sessync writes', () => {
  it('a session with a checkout and two branches resumes on the same branch in pi', async () => {
    const s = await t.json(['new', '--model', 'anthropic/claude-sonnet-4-5']);
    const [a] = (await t.json(['append', s.id], jsonl([msg('user', 'plan A'), msg('assistant', 'doing A')]))).ids;
    await t.json(['checkout', s.id, a!]);
    await t.json(['append', s.id], jsonl([msg('assistant', 'plan B', { provider: 'openai', model: 'gpt-5' }), { type: 'thinking_level_change', thinkingLevel: 'high' }]));
    const v = await expectSame(s.path);
    expect(v.model).toEqual({ provider: 'openai', modelId: 'gpt-5' });
    expect(v.thinkingLevel).toBe('high');
    expect(JSON.stringify(v.messages)).not.toContain('doing A');
  });

  it('no thinking_level_change on the branch: "off" in both (context --json too)', async () => {
    const s = await t.json(['new']);
    await t.json(['append', s.id], jsonl([msg('user', 'hi'), msg('assistant', 'hello')]));
    const v = await expectSame(s.path);
    expect(v.thinkingLevel).toBe('off');
    expect((await t.json(['context', s.id])).thinkingLevel).toBe('off');
  });

  it('a compaction and a branch summary project the same', async () => {
    const s = await t.json(['new']);
    const [u1, , u2] = (await t.json(['append', s.id], jsonl([msg('user', 'one'), msg('assistant', 'two'), msg('user', 'three')]))).ids;
    await t.json(['compact', s.id, '--summary', 'earlier talk', '--keep-from', u2!]);
    await t.json(['append', s.id], jsonl([{ type: 'branch_summary', fromId: u1, summary: 'tried another way' }, { type: 'custom_message', customType: 'ext', content: 'note', display: true }]));
    await expectSame(s.path);
  });
});

describe('damaged files', () => {
  it('duplicate ids: both use the later line', async () => {
    const id = '01900000-0000-7000-8000-0000000000d1';
    const path = join(projectDir(), `2026-01-01T00-00-00-000Z_${id}.jsonl`);
    const m = (eid: string, parentId: string | null, ts: string, text: string) => ({ type: 'message', id: eid, parentId, timestamp: ts, message: { role: 'user', content: text } });
    writeLines(path, [
      { type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: t.project },
      m('aaaa0001', null, '2026-01-01T00:00:01.000Z', 'first'),
      m('aaaa0002', 'aaaa0001', '2026-01-01T00:00:02.000Z', 'the earlier version'),
      m('aaaa0003', 'aaaa0002', '2026-01-01T00:00:03.000Z', 'third'),
      m('aaaa0002', 'aaaa0001', '2026-01-01T00:00:02.000Z', 'the later version'),
      m('aaaa0004', 'aaaa0003', '2026-01-01T00:00:04.000Z', 'last'),
    ]);
    const v = await expectSame(path);
    expect(JSON.stringify(v.messages)).toContain('the later version');
    expect(JSON.stringify(v.messages)).not.toContain('the earlier version');
  });

  it('a line holding two entries: sessync loads both, pi skips the line (the one known difference)', async () => {
    const id = '01900000-0000-7000-8000-0000000000d2';
    const path = join(projectDir(), `2026-01-01T00-00-00-000Z_${id}.jsonl`);
    const m = (eid: string, parentId: string | null, s: number) =>
      JSON.stringify({ type: 'message', id: eid, parentId, timestamp: `2026-01-01T00:00:0${s}.000Z`, message: { role: 'user', content: eid } });
    const text = [JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: t.project }), m('bbbb0001', null, 1), m('bbbb0002', 'bbbb0001', 2) + m('bbbb0003', 'bbbb0002', 3), m('bbbb0004', 'bbbb0003', 4)].join('\n') + '\n';
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, text);
    const ours = await sessyncView(path);
    const pi = piView(path);
    expect(ours.branch).toEqual(['bbbb0001', 'bbbb0002', 'bbbb0003', 'bbbb0004']);
    // pi drops the glued line, so bbbb0004's parent is missing for it and its branch stops there.
    expect(pi.leafId).toBe(ours.leafId);
    expect(pi.branch).toEqual(['bbbb0004']);
  });
});

describe('append refuses messages pi cannot use, and writes nothing', () => {
  const bad: [string, object, RegExp][] = [
    ['an unknown role', { type: 'message', message: { role: 'robot', content: 'beep' } }, /unknown message role "robot"/],
    ['an assistant message without provider and model', { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'x' }] } }, /message\.provider/],
    ['a toolResult without toolCallId', { type: 'message', message: { role: 'toolResult', toolName: 'bash', content: [] } }, /message\.toolCallId/],
  ];
  for (const [name, entry, re] of bad) {
    it(name, async () => {
      const s = await t.json(['new']);
      await t.json(['append', s.id], jsonl([msg('user', 'hi')]));
      const before = readFileSync(s.path);
      const r = await t.run(['append', s.id, '--json'], jsonl([msg('user', 'fine'), entry]));
      expect(r.code).not.toBe(0);
      expect(JSON.parse(r.stderr).error.message).toMatch(re);
      expect(readFileSync(s.path).equals(before)).toBe(true);
      // What pi resumes still has a model only from what was written, never "undefined/undefined".
      expect(piView(s.path).model).toBeNull();
    });
  }
});
