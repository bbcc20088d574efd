// The seed's six acceptance points for the session log, each as its own test, on real files in a temp folder.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContext } from '../../shared/context.js';
import { CHECKOUT_CUSTOM_TYPE, type SessionEntry } from '../../shared/entry.js';
import { newId } from '../../shared/ids.js';
import { parseSession, serializeLine } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { SessionTree } from '../../shared/tree.js';
import { brief, header, LogBuilder } from './log-builder.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sessync-accept-'));
  file = join(dir, 's.jsonl');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function appendAll(entries: SessionEntry[]): void {
  for (const e of entries) appendFileSync(file, serializeLine(e) + '\n');
}

/** A "restart": nothing survives but the file. */
async function reopen() {
  const parsed = parseSession(readFileSync(file, 'utf8'));
  const m = await migrateSession(parsed);
  const tree = SessionTree.from(m.entries);
  return { parsed, header: m.header, tree, ctx: buildContext(tree, { header: m.header }) };
}

describe('seed acceptance', () => {
  it('1. every entry is appended, never rewritten; a torn last line does not affect the entries before it', async () => {
    writeFileSync(file, serializeLine(header()) + '\n');
    const b = new LogBuilder();
    b.user('m1', null, 'fix the tests');
    appendAll([b.entries[0]!]);
    const afterFirst = readFileSync(file, 'utf8');
    b.assistant('m2', 'm1', 'running npm test');
    b.user('m3', 'm2', 'thanks');
    appendAll(b.entries.slice(1));
    // Appending only added bytes: the earlier content is a prefix of the file.
    expect(readFileSync(file, 'utf8').startsWith(afterFirst)).toBe(true);

    // A crash in the middle of writing a fourth entry.
    const torn = serializeLine({ type: 'message', id: 'm4', parentId: 'm3', timestamp: '2026-01-01T11:00:00.000Z', message: { role: 'assistant', content: [] } });
    appendFileSync(file, torn.slice(0, torn.length - 17));

    const { parsed, tree, ctx } = await reopen();
    expect(parsed.tornTail).toBe(true);
    expect(parsed.problems).toHaveLength(1);
    expect(parsed.problems[0]!.line).toBe(5);
    expect(parsed.problems[0]!.reason).toMatch(/torn last line/);
    expect(parsed.entries.map((e) => e.id)).toEqual(['m1', 'm2', 'm3']);
    expect(parsed.entries).toEqual(b.entries);
    expect(tree.leafId).toBe('m3');
    expect(ctx.messages.map(brief)).toEqual(['user:fix the tests', 'assistant:running npm test', 'user:thanks']);
  });

  it('2. after a restart the active branch is restored, including a checkout to an earlier entry', async () => {
    const b = new LogBuilder();
    b.user('a', null, 'start');
    b.assistant('b', 'a', 'plan A');
    b.user('c', 'b', 'do A');
    b.assistant('d', 'c', 'did A');
    // Checkout of b: recorded in the log so it survives; then the new branch continues from it.
    b.add('k', 'b', 'custom', { customType: CHECKOUT_CUSTOM_TYPE, data: { targetId: 'b' } });
    b.user('e', 'k', 'do B instead');
    writeFileSync(file, b.text());

    const before = SessionTree.from(b.entries);
    const { tree, ctx } = await reopen();
    expect(tree.leafId).toBe('e');
    expect(tree.leafId).toBe(before.leafId);
    expect(tree.branch().map((e) => e.id)).toEqual(['a', 'b', 'k', 'e']);
    expect(ctx.messages.map(brief)).toEqual(['user:start', 'assistant:plan A', 'user:do B instead']);

    // A checkout with nothing appended after it is restored too: the checkout entry is the leaf.
    appendAll([{ type: 'custom', customType: CHECKOUT_CUSTOM_TYPE, data: { targetId: 'd' }, id: 'k2', parentId: 'd', timestamp: '2026-01-01T12:00:00.000Z' }]);
    const again = await reopen();
    expect(again.tree.leafId).toBe('k2');
    expect(again.ctx.messages.map(brief)).toEqual(['user:start', 'assistant:plan A', 'user:do A', 'assistant:did A']);
  });

  it('3. model_change sets the model used after restore but is not an LLM message', async () => {
    const b = new LogBuilder();
    b.add('t', null, 'thinking_level_change', { thinkingLevel: 'high' });
    b.user('u1', 't', 'hello');
    b.assistant('a1', 'u1', 'hi', 'anthropic', 'claude-sonnet-4-5');
    b.add('mc', 'a1', 'model_change', { provider: 'openai', modelId: 'gpt-5' });
    writeFileSync(file, b.text());
    const { ctx } = await reopen();
    expect(ctx.model).toEqual({ provider: 'openai', modelId: 'gpt-5' });
    expect(ctx.thinkingLevel).toBe('high');
    expect(ctx.messages.map(brief)).toEqual(['user:hello', 'assistant:hi']);
    expect(JSON.stringify(ctx.messages)).not.toContain('gpt-5');
  });

  it('4. after branching from an earlier entry the old branch is still readable', async () => {
    const b = new LogBuilder();
    b.user('a', null, 'q');
    b.assistant('b', 'a', 'answer 1');
    b.user('c', 'b', 'old follow-up');
    b.assistant('d', 'c', 'old reply');
    b.user('e', 'b', 'new follow-up'); // a new branch from b
    writeFileSync(file, b.text());
    const { tree, ctx } = await reopen();
    expect(tree.leafId).toBe('e');
    expect(ctx.messages.map(brief)).toEqual(['user:q', 'assistant:answer 1', 'user:new follow-up']);
    expect(tree.children('b').map((x) => x.id)).toEqual(['c', 'e']);
    expect(tree.tips().map((x) => x.id)).toEqual(['d', 'e']);
    expect(buildContext(tree, { leafId: 'd' }).messages.map(brief)).toEqual(['user:q', 'assistant:answer 1', 'user:old follow-up', 'assistant:old reply']);
  });

  it('5. a compaction deletes no entry; it only changes the context projection', async () => {
    const b = new LogBuilder();
    b.user('u1', null, 'one');
    b.assistant('a1', 'u1', 'reply one');
    b.user('u2', 'a1', 'two');
    b.assistant('a2', 'u2', 'reply two');
    writeFileSync(file, b.text());
    const before = await reopen();
    const sizeBefore = readFileSync(file, 'utf8');
    appendAll([{ type: 'compaction', id: 'c1', parentId: 'a2', timestamp: '2026-01-01T12:00:00.000Z', summary: 'talked about one', firstKeptEntryId: 'u2', tokensBefore: 1234 }]);
    const after = await reopen();
    expect(readFileSync(file, 'utf8').startsWith(sizeBefore)).toBe(true);
    expect(after.tree.size).toBe(before.tree.size + 1);
    for (const e of before.tree.entries) expect(after.tree.get(e.id)).toEqual(e);
    expect(before.ctx.messages.map(brief)).toEqual(['user:one', 'assistant:reply one', 'user:two', 'assistant:reply two']);
    expect(after.ctx.messages.map(brief)).toEqual(['compactionSummary:talked about one', 'user:two', 'assistant:reply two']);
    expect(after.ctx.messages[0]).toMatchObject({ role: 'compactionSummary', tokensBefore: 1234 });
    // The branch before the compaction still projects in full.
    expect(buildContext(after.tree, { leafId: 'a2' }).messages).toHaveLength(4);
  });

  it('6. a v1 sample (linear, no ids) migrates to the current version and restores', async () => {
    const v1 = [
      { type: 'session', id: 'old-1', timestamp: '2025-06-01T09:00:00.000Z', cwd: '/repo', provider: 'anthropic', modelId: 'claude-3-5-sonnet', thinkingLevel: 'low' },
      { type: 'message', timestamp: '2025-06-01T09:00:01.000Z', message: { role: 'user', content: [{ type: 'text', text: 'fix tests' }] } },
      { type: 'message', timestamp: '2025-06-01T09:00:02.000Z', message: { role: 'assistant', content: [{ type: 'text', text: 'on it' }] } },
      { type: 'compaction', timestamp: '2025-06-01T09:00:03.000Z', summary: 'the user wants tests fixed', firstKeptEntryIndex: 2, tokensBefore: 99 },
      { type: 'message', timestamp: '2025-06-01T09:00:04.000Z', message: { role: 'user', content: [{ type: 'text', text: 'go on' }] } },
    ];
    writeFileSync(file, v1.map((x) => JSON.stringify(x) + '\n').join(''));
    const { parsed, header: h, tree, ctx } = await reopen();
    expect(parsed.version).toBe(1);
    expect(h.version).toBe(3);
    expect(tree.problems).toEqual([]);
    const ids = tree.entries.map((e) => e.id);
    expect(tree.branch().map((e) => e.id)).toEqual(ids);
    // The header's model and thinking level come first, as entries pi reads; then the v1 lines.
    expect(tree.entries.slice(0, 2).map((e) => e.type)).toEqual(['model_change', 'thinking_level_change']);
    expect(tree.entries[0]!.parentId).toBeNull();
    expect(tree.entries[2]!.parentId).toBe(ids[1]);
    expect(tree.entries[5]!.parentId).toBe(ids[4]);
    expect(tree.get(ids[4]!)).toMatchObject({ type: 'compaction', firstKeptEntryId: ids[3] });
    expect(tree.get(ids[4]!)).not.toHaveProperty('firstKeptEntryIndex');
    // No provider on the assistant message: the model comes from the v1 header (its model_change).
    expect(ctx.model).toEqual({ provider: 'anthropic', modelId: 'claude-3-5-sonnet' });
    expect(ctx.thinkingLevel).toBe('low');
    expect(ctx.messages.map(brief)).toEqual(['compactionSummary:the user wants tests fixed', 'assistant:on it', 'user:go on']);
    // A new entry can be appended under the restored leaf.
    const next = { type: 'message', id: newId(), parentId: tree.leafId, timestamp: '2025-06-01T09:00:05.000Z', message: { role: 'user', content: 'more' } };
    expect(SessionTree.from([...tree.entries, next as SessionEntry]).leafId).toBe(next.id);
  });
});
