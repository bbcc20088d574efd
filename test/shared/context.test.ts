// Context projection rules, one table row per rule, plus model and thinking-level resolution.
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../shared/context.js';
import { SessionTree } from '../../shared/tree.js';
import { brief, header, LogBuilder } from './log-builder.js';

function project(build: (b: LogBuilder) => void, opts: { leafId?: string; header?: ReturnType<typeof header> | null } = {}) {
  const b = new LogBuilder();
  build(b);
  return buildContext(SessionTree.from(b.entries), opts);
}

describe('what enters the messages', () => {
  const cases: { name: string; build: (b: LogBuilder) => void; messages: string[] }[] = [
    { name: 'message: in', build: (b) => { b.user('u', null, 'hi'); b.assistant('a', 'u', 'yo'); }, messages: ['user:hi', 'assistant:yo'] },
    { name: 'model_change: out', build: (b) => { b.user('u', null, 'hi'); b.add('m', 'u', 'model_change', { provider: 'p', modelId: 'x' }); }, messages: ['user:hi'] },
    { name: 'thinking_level_change: out', build: (b) => { b.add('t', null, 'thinking_level_change', { thinkingLevel: 'high' }); b.user('u', 't', 'hi'); }, messages: ['user:hi'] },
    { name: 'custom: out', build: (b) => { b.user('u', null, 'hi'); b.add('c', 'u', 'custom', { customType: 'ext', data: { secret: 1 } }); }, messages: ['user:hi'] },
    { name: 'custom_message: in as role custom', build: (b) => { b.user('u', null, 'hi'); b.add('c', 'u', 'custom_message', { customType: 'ext', content: 'injected', display: true }); }, messages: ['user:hi', 'custom:injected'] },
    { name: 'branch_summary: in', build: (b) => { b.user('u', null, 'hi'); b.add('s', 'u', 'branch_summary', { fromId: 'x', summary: 'tried B' }); }, messages: ['user:hi', 'branchSummary:tried B'] },
    { name: 'empty branch_summary: out (as pi)', build: (b) => { b.user('u', null, 'hi'); b.add('s', 'u', 'branch_summary', { fromId: 'x', summary: '' }); }, messages: ['user:hi'] },
    { name: 'label: never', build: (b) => { b.user('u', null, 'hi'); b.add('l', 'u', 'label', { targetId: 'u', label: 'start' }); }, messages: ['user:hi'] },
    { name: 'session_info: never', build: (b) => { b.user('u', null, 'hi'); b.add('i', 'u', 'session_info', { name: 'n' }); }, messages: ['user:hi'] },
    { name: 'unknown type: never', build: (b) => { b.user('u', null, 'hi'); b.add('f', 'u', 'future_type', { message: { role: 'user', content: 'x' } }); }, messages: ['user:hi'] },
    {
      name: 'compaction: summary, then from firstKeptEntryId, then after',
      build: (b) => {
        b.user('u1', null, 'one'); b.assistant('a1', 'u1', 'r1'); b.user('u2', 'a1', 'two'); b.assistant('a2', 'u2', 'r2');
        b.add('c', 'a2', 'compaction', { summary: 'S', firstKeptEntryId: 'u2', tokensBefore: 5 });
        b.user('u3', 'c', 'three');
      },
      messages: ['compactionSummary:S', 'user:two', 'assistant:r2', 'user:three'],
    },
    {
      name: 'only the latest compaction on the branch counts',
      build: (b) => {
        b.user('u1', null, 'one'); b.add('c1', 'u1', 'compaction', { summary: 'S1', firstKeptEntryId: 'u1', tokensBefore: 1 });
        b.user('u2', 'c1', 'two'); b.user('u3', 'u2', 'three');
        b.add('c2', 'u3', 'compaction', { summary: 'S2', firstKeptEntryId: 'u3', tokensBefore: 2 });
        b.user('u4', 'c2', 'four');
      },
      messages: ['compactionSummary:S2', 'user:three', 'user:four'],
    },
    {
      name: 'compaction whose firstKeptEntryId is not on the branch keeps nothing before it',
      build: (b) => {
        b.user('u1', null, 'one'); b.add('c', 'u1', 'compaction', { summary: 'S', firstKeptEntryId: 'gone', tokensBefore: 1 }); b.user('u2', 'c', 'two');
      },
      messages: ['compactionSummary:S', 'user:two'],
    },
    {
      name: 'entries kept by a compaction are projected by the same rules',
      build: (b) => {
        b.user('u1', null, 'one'); b.add('x', 'u1', 'custom', { customType: 'e' }); b.add('cm', 'x', 'custom_message', { customType: 'e', content: [{ type: 'text', text: 'cm' }], display: false });
        b.add('c', 'cm', 'compaction', { summary: 'S', firstKeptEntryId: 'u1', tokensBefore: 1 });
      },
      messages: ['compactionSummary:S', 'user:one', 'custom:cm'],
    },
    {
      name: 'a compaction on another branch does not apply',
      build: (b) => {
        b.user('u1', null, 'one'); b.user('u2', 'u1', 'two'); b.add('c', 'u2', 'compaction', { summary: 'S', firstKeptEntryId: 'u2', tokensBefore: 1 });
        b.user('u3', 'u1', 'other');
      },
      messages: ['user:one', 'user:other'],
    },
  ];
  for (const c of cases) it(c.name, () => expect(project(c.build).messages.map(brief)).toEqual(c.messages));

  it('custom_message and summaries have pi\'s shape', () => {
    const ctx = project((b) => {
      b.user('u', null, 'x');
      b.add('cm', 'u', 'custom_message', { customType: 'ext', content: 'c', display: false, details: { k: 1 } });
      b.add('bs', 'cm', 'branch_summary', { fromId: 'zz', summary: 'S' });
    });
    expect(ctx.messages[1]).toEqual({ role: 'custom', customType: 'ext', content: 'c', display: false, details: { k: 1 }, timestamp: Date.parse('2026-01-01T10:00:02.000Z') });
    expect(ctx.messages[2]).toEqual({ role: 'branchSummary', summary: 'S', fromId: 'zz', timestamp: Date.parse('2026-01-01T10:00:03.000Z') });
  });

  it('message objects are passed through unchanged (same object)', () => {
    const b = new LogBuilder();
    const u = b.user('u', null, 'x');
    expect(buildContext(SessionTree.from(b.entries)).messages[0]).toBe(u.message);
  });
});

describe('model and thinking level', () => {
  const cases: { name: string; build: (b: LogBuilder) => void; h?: ReturnType<typeof header>; model: object | null; thinking: string | null }[] = [
    { name: 'nothing known', build: (b) => b.user('u', null, 'x'), model: null, thinking: 'off' },
    { name: 'model_change', build: (b) => { b.user('u', null, 'x'); b.add('m', 'u', 'model_change', { provider: 'openai', modelId: 'gpt-5' }); }, model: { provider: 'openai', modelId: 'gpt-5' }, thinking: 'off' },
    { name: 'falls back to the last assistant message', build: (b) => { b.user('u', null, 'x'); b.assistant('a', 'u', 'y', 'google', 'gemini'); }, model: { provider: 'google', modelId: 'gemini' }, thinking: 'off' },
    { name: 'the later of model_change and assistant wins (pi)', build: (b) => { b.add('m', null, 'model_change', { provider: 'openai', modelId: 'gpt-5' }); b.assistant('a', 'm', 'y', 'google', 'gemini'); }, model: { provider: 'google', modelId: 'gemini' }, thinking: 'off' },
    { name: 'model_change after the assistant wins', build: (b) => { b.assistant('a', null, 'y', 'google', 'gemini'); b.add('m', 'a', 'model_change', { provider: 'openai', modelId: 'gpt-5' }); }, model: { provider: 'openai', modelId: 'gpt-5' }, thinking: 'off' },
    {
      name: 'header of a migrated v1 file as last resort',
      build: (b) => b.user('u', null, 'x'),
      h: header({ provider: 'anthropic', modelId: 'claude-3', thinkingLevel: 'medium' }),
      model: { provider: 'anthropic', modelId: 'claude-3' },
      thinking: 'medium',
    },
    {
      name: 'the branch beats the header',
      build: (b) => { b.add('t', null, 'thinking_level_change', { thinkingLevel: 'off' }); b.assistant('a', 't', 'y', 'p', 'm'); },
      h: header({ provider: 'anthropic', modelId: 'claude-3', thinkingLevel: 'medium' }),
      model: { provider: 'p', modelId: 'm' },
      thinking: 'off',
    },
    { name: 'last thinking_level_change wins', build: (b) => { b.add('t1', null, 'thinking_level_change', { thinkingLevel: 'high' }); b.add('t2', 't1', 'thinking_level_change', { thinkingLevel: 'low' }); }, model: null, thinking: 'low' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const ctx = project(c.build, { header: c.h ?? null });
      expect(ctx.model).toEqual(c.model);
      expect(ctx.thinkingLevel).toBe(c.thinking);
    });
  }

  it('settings come from the chosen branch only', () => {
    const b = new LogBuilder();
    b.user('u', null, 'x');
    b.add('m1', 'u', 'model_change', { provider: 'a', modelId: 'one' });
    b.add('m2', 'u', 'model_change', { provider: 'b', modelId: 'two' });
    const t = SessionTree.from(b.entries);
    expect(buildContext(t, { leafId: 'm1' }).model).toEqual({ provider: 'a', modelId: 'one' });
    expect(buildContext(t).model).toEqual({ provider: 'b', modelId: 'two' });
  });

  it('an empty session projects to nothing', () => {
    expect(buildContext(SessionTree.from([]))).toEqual({ model: null, thinkingLevel: 'off', messages: [] });
  });
});
