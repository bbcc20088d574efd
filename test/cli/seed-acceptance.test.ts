// The seed's six acceptance points, end to end through the real `sessync` binary, each as its own test.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/cli.js';
import { cliEnv, entriesOf, jsonl, lines, msg, writeLines } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
beforeEach(() => {
  t = cliEnv();
});
afterEach(() => t.cleanup());

async function newSession(model?: string): Promise<{ id: string; path: string }> {
  return t.json(['new', ...(model ? ['--model', model] : [])]);
}
async function append(id: string, values: object[], extra: string[] = []): Promise<string[]> {
  return (await t.json<{ ids: string[] }>(['append', id, ...extra], jsonl(values))).ids;
}

describe('seed acceptance through the CLI', () => {
  it('1. entries are appended, never rewritten; a torn last line does not affect the entries before it', async () => {
    const s = await newSession();
    await append(s.id, [msg('user', 'fix the tests')]);
    const before = readFileSync(s.path);
    const ids = await append(s.id, [msg('assistant', 'running npm test'), msg('user', 'thanks')]);
    const after = readFileSync(s.path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(lines(s.path)).toHaveLength(4);

    appendFileSync(s.path, '{"type":"message","id":"torn","parentId":'); // a crash mid-write
    const r = await t.json(['resume', s.id]);
    expect(r.leafId).toBe(ids[1]);
    expect(r.messageCount).toBe(3);
    expect(r.problems).toEqual([expect.objectContaining({ line: 5 })]);
    const log = await t.json(['log', s.id]);
    expect(log.entries.map((e: any) => e.message.content[0].text)).toEqual(['fix the tests', 'running npm test', 'thanks']);
  });

  it('2. a restart restores the active branch, also one chosen by checkout', async () => {
    const s = await newSession();
    const [a, b] = await append(s.id, [msg('user', 'A'), msg('assistant', 'B')]);
    await append(s.id, [msg('user', 'C')]);
    const co = await t.json(['checkout', s.id, a!.slice(-8)]);
    expect(co.targetId).toBe(a);
    const [d] = await append(s.id, [msg('user', 'D')]);
    // Every command is a new process: nothing but the file carries the branch.
    const r = await t.json(['resume', s.id]);
    expect(r.leafId).toBe(d);
    const log = await t.json(['log', s.id]);
    expect(log.entries.map((e: any) => e.id)).toEqual([a, co.leafId, d]);
    const ctx = await t.json(['context', s.id]);
    expect(ctx.messages.map((m: any) => m.content[0].text)).toEqual(['A', 'D']);
    // pi reads the last line as its leaf: the checkout is recorded as an entry whose parent is the target.
    const all = entriesOf(s.path);
    expect(all.find((e) => e.id === co.leafId)).toMatchObject({ type: 'custom', customType: 'sessync.checkout', parentId: a, data: { targetId: a } });
    expect(all.some((e) => e.id === b)).toBe(true);
  });

  it('3. model_change sets the model of the restored session but is not a message', async () => {
    const s = await newSession('anthropic/claude-sonnet-4-5');
    await append(s.id, [msg('user', 'hi'), { type: 'model_change', provider: 'openai', modelId: 'gpt-5' }, { type: 'thinking_level_change', thinkingLevel: 'high' }]);
    await append(s.id, [msg('user', 'next')]);
    const r = await t.json(['resume', s.id]);
    expect(r.model).toEqual({ provider: 'openai', modelId: 'gpt-5' });
    expect(r.thinkingLevel).toBe('high');
    const ctx = await t.json(['context', s.id]);
    expect(ctx.messages).toHaveLength(2);
    expect(ctx.messages.every((m: any) => m.role === 'user')).toBe(true);
    expect(JSON.stringify(ctx.messages)).not.toContain('gpt-5');
  });

  it('4. after a fork from an earlier entry the old branch stays readable', async () => {
    const s = await newSession();
    const [a, b, c] = await append(s.id, [msg('user', 'A'), msg('assistant', 'B'), msg('user', 'C')]);
    const sourceBefore = readFileSync(s.path);
    const f = await t.json(['fork', s.id, '--at', b!]);
    expect(f.parentSession).toBe(s.path); // a file path, as pi writes it (its picker nests the fork under it)
    expect(f.parentSessionId).toBe(s.id);
    expect(f.parentEntry).toBe(b);
    const forked = entriesOf(f.path);
    expect(forked.map((e) => e.id)).toEqual([a, b]);
    expect(JSON.parse(lines(f.path)[0]!)).toMatchObject({ type: 'session', parentSession: s.path, parentSessionId: s.id, parentEntry: b, cwd: t.project });
    // The fork goes on by itself; the source file is byte for byte what it was, and still resumes at C.
    await append(f.id, [msg('user', 'B2')]);
    expect(readFileSync(s.path).equals(sourceBefore)).toBe(true);
    expect((await t.json(['resume', s.id])).leafId).toBe(c);
    expect((await t.json(['log', s.id])).entries.map((e: any) => e.id)).toEqual([a, b, c]);
    expect((await t.json(['context', f.id])).messages.map((m: any) => m.content[0].text)).toEqual(['A', 'B', 'B2']);
  });

  it('5. a compaction keeps every old entry and only changes the context', async () => {
    const s = await newSession();
    const ids = await append(s.id, ['one', 'two', 'three', 'four'].map((x, i) => msg(i % 2 ? 'assistant' : 'user', x)));
    const before = readFileSync(s.path);
    const c = await t.json(['compact', s.id, '--summary', 'talked about one and two', '--keep-from', ids[2]!]);
    expect(c.tokensBefore).toBeGreaterThan(0);
    const after = readFileSync(s.path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(entriesOf(s.path).at(-1)).toMatchObject({ type: 'compaction', firstKeptEntryId: ids[2], parentId: ids[3] });
    const ctx = await t.json(['context', s.id]);
    expect(ctx.messages[0]).toMatchObject({ role: 'compactionSummary', summary: 'talked about one and two' });
    expect(ctx.messages.slice(1).map((m: any) => m.content[0].text)).toEqual(['three', 'four']);
    const log = await t.json(['log', s.id]);
    expect(log.entries.map((e: any) => e.id)).toEqual([...ids, c.id]);
  });

  it('6. a v1 (linear) file migrates and resumes: ids, parent chain, model from its header, original kept as .bak', async () => {
    const dir = join(t.root, '--legacy--');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, '2025-01-01T00-00-00-000Z_v1sess.jsonl');
    writeLines(path, [
      { type: 'session', id: 'v1sess', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/legacy', provider: 'anthropic', modelId: 'claude-3', thinkingLevel: 'low' },
      { type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'one' } },
      { type: 'message', timestamp: '2025-01-01T00:00:02.000Z', message: { role: 'assistant', content: [{ type: 'text', text: 'two' }] } },
      { type: 'compaction', timestamp: '2025-01-01T00:00:03.000Z', summary: 'earlier', firstKeptEntryIndex: 2 },
      { type: 'message', timestamp: '2025-01-01T00:00:04.000Z', message: { role: 'user', content: 'three' } },
    ]);
    const original = readFileSync(path);
    const r = await t.json(['resume', 'v1sess']);
    expect(r.model).toEqual({ provider: 'anthropic', modelId: 'claude-3' });
    expect(r.thinkingLevel).toBe('low');
    expect(readFileSync(`${path}.bak`).equals(original)).toBe(true);
    const migrated = entriesOf(path);
    expect(JSON.parse(lines(path)[0]!).version).toBe(3);
    expect(migrated[0].parentId).toBeNull();
    for (let i = 1; i < migrated.length; i++) expect(migrated[i].parentId).toBe(migrated[i - 1].id);
    // The header's model and thinking level lead the chain, as entries pi reads.
    expect(migrated.slice(0, 2).map((e: any) => e.type)).toEqual(['model_change', 'thinking_level_change']);
    expect(migrated[4]).toMatchObject({ type: 'compaction', firstKeptEntryId: migrated[3].id });
    const ctx = await t.json(['context', 'v1sess']);
    expect(ctx.messages.map((m: any) => m.role)).toEqual(['compactionSummary', 'assistant', 'user']);
    // It keeps working as a current session.
    await t.json(['append', 'v1sess'], jsonl([msg('user', 'four')]));
    expect(entriesOf(path).at(-1).parentId).toBe(migrated[5].id);
  });
});

const PI_V1 = join(REPO_ROOT, '..', 'shared', 'fixtures', 'pi-v1');

/** What the raw v1 lines say, computed independently of sessync: last model/thinking level, last compaction's kept line. */
function oracle(text: string) {
  const all = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const h = all[0];
  let model = h.provider ? { provider: h.provider, modelId: h.modelId } : null;
  let thinking = h.thinkingLevel ?? null;
  let kept: any = null;
  for (const l of all.slice(1)) {
    if (l.type === 'model_change') model = { provider: l.provider, modelId: l.modelId };
    if (l.type === 'message' && l.message.role === 'assistant' && typeof l.message.provider === 'string') model = { provider: l.message.provider, modelId: l.message.model };
    if (l.type === 'thinking_level_change') thinking = l.thinkingLevel;
    if (l.type === 'compaction') kept = { summary: l.summary, first: all[l.firstKeptEntryIndex].message };
  }
  return { id: h.id as string, model, thinking, kept, messages: all.filter((l) => l.type === 'message').length };
}

describe.skipIf(!existsSync(PI_V1))('pi v1 fixtures (../shared/fixtures/pi-v1; skipped when absent)', () => {
  for (const file of ['before-compaction.jsonl', 'large-session.jsonl']) {
    it(`${file} migrates on resume with the right model, thinking level and compaction projection; .bak kept`, async () => {
      const original = readFileSync(join(PI_V1, file));
      const o = oracle(original.toString('utf8'));
      const sessions = join(t.dir, 'pi-sessions');
      const dir = join(sessions, '--Users-badlogic-workspaces-pi-mono--');
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `2025-12-09T00-00-00-000Z_${o.id}.jsonl`);
      copyFileSync(join(PI_V1, file), path);
      chmodSync(path, 0o644);
      const ref = o.id.slice(0, 8);
      const before = await t.json(['context', ref, '--sessions-dir', sessions]);
      expect(readFileSync(path).equals(original)).toBe(true); // reading migrates in memory only

      const r = await t.json(['resume', ref, '--sessions-dir', sessions]);
      expect(r.id).toBe(o.id);
      expect(r.problems).toEqual([]);
      expect(r.model).toEqual(o.model);
      expect(r.thinkingLevel).toBe(o.thinking);
      expect(readFileSync(`${path}.bak`).equals(original)).toBe(true);
      expect(JSON.parse(lines(path)[0]!).version).toBe(3);
      // Every v1 line, plus the header's model and thinking level as entries.
      expect(entriesOf(path)).toHaveLength(lines(`${path}.bak`).length - 1 + 2);

      const after = await t.json(['context', ref, '--sessions-dir', sessions]);
      expect(after).toEqual(before);
      expect(r.messageCount).toBe(after.messages.length);
      if (o.kept) {
        expect(after.messages[0]).toMatchObject({ role: 'compactionSummary', summary: o.kept.summary });
        expect(after.messages[1]).toEqual(o.kept.first);
      } else {
        expect(after.messages).toHaveLength(o.messages);
      }
    });
  }
});
